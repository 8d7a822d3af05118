// agenttest HTML report: renders the cases embedded as JSON, a page at a
// time, with filters and a search. Text from the run is only ever set with
// textContent: agent replies are hostile text, never markup.
(function () {
  "use strict";
  var PAGE = 100;
  var data = JSON.parse(document.getElementById("agenttest-data").textContent);
  var cases = data.cases;
  var list = document.getElementById("list");
  var more = document.getElementById("more");
  var shown = document.getElementById("shown");
  var search = document.getElementById("search");
  var chips = Array.prototype.slice.call(document.querySelectorAll(".chip[data-kind]"));
  var selected = {}; // kind -> true
  var query = "";
  var matches = []; // indices of cases shown
  var rendered = 0;
  var haystack = null; // lower-cased searchable text per case, built on first search

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // longText is an element of text that the report may have cut (cut is
  // its head and length, htmlLong in html_data.go): the head, and a
  // button that shows the whole text, or the head again.
  function longText(tag, cls, whole, cut) {
    return cutText(el(tag, cls), whole, cut);
  }

  // cutText fills e with longText's head and button. A value whose
  // hidden part holds what the search matched is shown whole, as a
  // browser's find in page reveals a folded match: the reader who
  // searched for a word sees it in the case the search kept.
  function cutText(e, whole, cut) {
    var text = document.createTextNode(cut || whole);
    e.appendChild(text);
    if (!cut) return e;
    var btn = el("button", "whole");
    btn.type = "button";
    function show(open) {
      text.nodeValue = open ? whole : cut;
      btn.textContent = open ? "show less" : "show all";
      btn.setAttribute("aria-expanded", String(open));
    }
    btn.addEventListener("click", function () { show(btn.getAttribute("aria-expanded") !== "true"); });
    // No query is in every head.
    var q = query.trim().toLowerCase();
    show(whole.toLowerCase().indexOf(q) >= 0 && cut.toLowerCase().indexOf(q) < 0);
    e.appendChild(btn);
    return e;
  }

  function ms(v) {
    if (v >= 1000) return (v / 1000).toFixed(v >= 10000 ? 0 : 1) + "s";
    if (v >= 10) return Math.round(v) + "ms";
    return v.toFixed(1) + "ms";
  }

  function kindOf(c) { return c.k[0]; }

  function searchText(c) {
    var parts = [c.n, c.p, c.h || "", c.note || ""];
    // Every attempt's failures and error, not only the one the row
    // shows: a flaky case's failed attempt, a second broken expectation.
    (c.a || []).forEach(function (a) {
      (a.fail || []).forEach(function (f) { parts.push(f.line); });
      if (a.err) parts.push(a.err);
      (a.turns || []).forEach(function (t) { if (t.r) parts.push(t.r); });
    });
    return parts.join("\n").toLowerCase();
  }

  function matchesFilter(c) {
    var any = false;
    for (var k in selected) {
      if (!selected[k]) continue;
      any = true;
      if (c.k.indexOf(k) >= 0) return true;
    }
    return !any;
  }

  function apply() {
    var q = query.trim().toLowerCase();
    if (q && !haystack) haystack = cases.map(searchText);
    matches = [];
    for (var i = 0; i < cases.length; i++) {
      if (!matchesFilter(cases[i])) continue;
      if (q && haystack[i].indexOf(q) < 0) continue;
      matches.push(i);
    }
    list.textContent = "";
    rendered = 0;
    renderMore();
    writeHash();
    // A reader deep in a long list who narrows it sees its start.
    if (list.getBoundingClientRect().top < 0) document.getElementById("cases").scrollIntoView();
  }

  function renderMore() {
    var end = Math.min(matches.length, rendered + PAGE);
    var frag = document.createDocumentFragment();
    for (var i = rendered; i < end; i++) frag.appendChild(row(matches[i]));
    list.appendChild(frag);
    rendered = end;
    more.hidden = rendered >= matches.length;
    more.textContent = "Show more (" + (matches.length - rendered) + " left)";
    var total = cases.length;
    shown.textContent = matches.length === total
      ? "showing " + rendered + " of " + total + " cases"
      : matches.length + " of " + total + " cases match; showing " + rendered;
  }

  function row(i) {
    var c = cases[i];
    var art = el("article", "case k-" + kindOf(c));
    art.id = "case-" + i;
    art.setAttribute("data-status", c.s);
    var btn = el("button", "row");
    btn.type = "button";
    btn.setAttribute("aria-expanded", "false");
    var label = c.k.indexOf("inconclusive") >= 0 ? "inconclusive" : kindOf(c);
    btn.appendChild(el("span", "badge s-" + label, label));
    btn.appendChild(el("span", "name", c.n));
    btn.appendChild(el("span", "dur", ms(c.d)));
    btn.appendChild(el("span", "pos mono", c.p));
    if (c.h) btn.appendChild(el("span", "head mono", c.h));
    else if (c.note) btn.appendChild(el("span", "note", c.note));
    btn.addEventListener("click", function () { toggle(art, c, btn); });
    art.appendChild(btn);
    return art;
  }

  function toggle(art, c, btn) {
    var body = art.querySelector(".body");
    if (body) {
      body.hidden = !body.hidden;
    } else {
      body = detail(c);
      // Where a reader copies a link to the case from (reveal).
      var link = el("a", "permalink", "link to this case");
      link.href = "#" + art.id;
      body.insertBefore(link, body.firstChild);
      art.appendChild(body);
    }
    btn.setAttribute("aria-expanded", String(!body.hidden));
  }

  // failedAttempt mirrors the console: the last attempt that failed or
  // errored, else the last.
  function failedAttempt(c) {
    var as = c.a || [];
    for (var i = as.length - 1; i >= 0; i--) {
      if (as[i].s === "failed" || as[i].s === "errored") return as[i];
    }
    return as[as.length - 1];
  }

  function detail(c) {
    var b = el("div", "body");
    if (c.h && c.note) b.appendChild(el("p", "meta", c.note));
    var metaParts = [];
    if (c.f >= 0 && data.files[c.f]) metaParts.push("suite " + data.files[c.f].suite);
    if (c.m) metaParts.push(c.m);
    if (c.rw) metaParts.push("waited " + ms(c.rw) + " on rate limits");
    if (metaParts.length) b.appendChild(el("p", "meta", metaParts.join(" · ")));
    if (c.t && c.t.length) {
      var tags = el("p", "meta");
      c.t.forEach(function (t) { tags.appendChild(el("span", "tag", t)); });
      b.appendChild(tags);
    }
    if (c.runs) {
      var strip = el("div", "runs");
      strip.setAttribute("aria-label", "runs: p passed, f failed, e errored");
      for (var r = 0; r < c.runs.length; r++) {
        var ch = c.runs.charAt(r);
        var cell = el("i", ch === "p" ? "" : ch);
        cell.title = "run " + (r + 1) + ": " + ({ p: "passed", f: "failed", e: "errored" })[ch];
        strip.appendChild(cell);
      }
      b.appendChild(strip);
    }
    if (c.sp && c.sp.length) {
      // The spread of each similar check over the runs: where an agent
      // whose answers vary sits against its threshold.
      b.appendChild(el("p", "meta", "similarity over the runs:"));
      var spreads = el("ul", "kinds mono");
      c.sp.forEach(function (k) { spreads.appendChild(el("li", "", k)); });
      b.appendChild(spreads);
    }
    if (c.fk && c.fk.length) {
      // What the failed runs got wrong, and how often: every wrong
      // answer without opening each run.
      b.appendChild(el("p", "meta", "failed runs by what failed first:"));
      var kinds = el("ul", "kinds mono");
      c.fk.forEach(function (k) { kinds.appendChild(el("li", "", k)); });
      b.appendChild(kinds);
    }
    var as = c.a || [];
    if (as.length === 0) return b;
    var main = failedAttempt(c);
    if (as.length === 1) {
      b.appendChild(attempt(as[0]));
      return b;
    }
    // A statistical scenario may have dozens of runs: the ones that did
    // not pass are listed, the passing ones folded into one group.
    var passing = [];
    as.forEach(function (a) {
      if (c.runs && (a.s === "passed" || a.s === "flaky")) passing.push(a);
      else b.appendChild(attemptDetails(a, as.length, a === main));
    });
    if (passing.length) {
      var group = el("details", "attempt");
      group.appendChild(el("summary", "", passing.length + (passing.length === 1 ? " passing run" : " passing runs")));
      var filled = false;
      group.addEventListener("toggle", function () {
        if (filled || !group.open) return;
        filled = true;
        passing.forEach(function (a) { group.appendChild(attemptDetails(a, as.length, false)); });
      });
      b.appendChild(group);
    }
    return b;
  }

  // attemptDetails is one attempt of several, folded unless open; its
  // body is drawn when it is first opened.
  function attemptDetails(a, n, open) {
    var d = el("details", "attempt");
    d.open = open;
    var label = (a.run ? "run " + a.run + ", attempt " + a.n : "attempt " + a.n + " of " + n) + ": " + a.s + " · " + ms(a.d);
    d.appendChild(el("summary", "", label));
    var filled = false;
    var fill = function () { if (!filled && d.open) { filled = true; d.appendChild(attempt(a)); } };
    d.addEventListener("toggle", fill);
    fill();
    return d;
  }

  function attempt(a) {
    var w = el("div", "attempt-body");
    (a.fail || []).forEach(function (f) { w.appendChild(failure(f)); });
    if (a.err) w.appendChild(el("p", "error mono", a.err));
    if (a.nr) {
      // The steps after the one that ended the attempt: what it left
      // untested, one line, each step on opening it.
      var nr = el("details", "not-run");
      nr.appendChild(el("summary", "", a.nr.line));
      var steps = el("ul", "mono");
      a.nr.steps.forEach(function (s) { steps.appendChild(el("li", "", s)); });
      nr.appendChild(steps);
      w.appendChild(nr);
    }
    if (a.turns && a.turns.length) w.appendChild(chat(a));
    if (a.conf && a.conf.length) {
      w.appendChild(el("h4", "", "Confirmed"));
      var ul = el("ul", "confirm");
      a.conf.forEach(function (cf) {
        var li = el("li");
        li.appendChild(el("span", cf.ok ? "ok" : "no", cf.ok ? "✓ " : "✗ "));
        li.appendChild(document.createTextNode(cf.kind + " " + cf.subj + (cf.sum ? ": " + cf.sum : "")));
        if (cf.seen && cf.seen.length) {
          // What a probe did and saw: its call's statuses, its SMS and
          // the platform's answer, the turns of its record.
          var seen = el("ul", "seen mono");
          cf.seen.forEach(function (sn) { seen.appendChild(el("li", sn.w, sn.x)); });
          li.appendChild(seen);
        }
        ul.appendChild(li);
      });
      w.appendChild(ul);
    }
    return w;
  }

  function failure(f) {
    var box = el("div", "failure");
    box.appendChild(el("div", "line mono", f.line));
    if (f.exp !== undefined || f.act !== undefined) {
      var kv = el("div", "kv");
      kv.appendChild(el("span", "", "expected"));
      kv.appendChild(longText("pre", "exp", f.exp === undefined ? "" : f.exp, f.expc));
      if (f.near !== undefined) {
        kv.appendChild(el("span", "", "nearest"));
        kv.appendChild(longText("pre", "exp", f.near, f.nearc));
      }
      kv.appendChild(el("span", "", "actual"));
      kv.appendChild(longText("pre", "act", f.act === undefined ? "" : f.act, f.actc));
      if (f.diff) {
        kv.appendChild(el("span", "", "diff"));
        kv.appendChild(diff(f.diff));
      }
      box.appendChild(kv);
    }
    return box;
  }

  function diff(d) {
    var pre = el("pre", "diff");
    if (d.note) pre.appendChild(el("span", "note", "(" + d.note + ")"));
    d.ch.forEach(function (p) {
      var op = p[0], text = p[1];
      if (!d.lines) {
        pre.appendChild(op === 1 ? el("del", "", text) : op === 2 ? el("ins", "", text) : document.createTextNode(text));
        return;
      }
      var lines = text.replace(/\n$/, "").split("\n");
      lines.forEach(function (l) {
        var prefix = op === 1 ? "- " : op === 2 ? "+ " : "  ";
        pre.appendChild(el("span", "l" + (op === 1 ? " rm" : op === 2 ? " add" : ""), prefix + l));
      });
    });
    if (d.trunc) pre.appendChild(el("span", "note", " (diff truncated)"));
    return pre;
  }

  function chat(a) {
    var box = el("div", "chat");
    box.appendChild(el("h4", "", "Transcript" + (a.conv ? " (conversation " + a.conv + ")" : "")));
    a.turns.forEach(function (t) {
      var turn = el("div", "turn" + (t.i === a.broke ? " broke" : ""));
      var label = (t.i === 0 ? "greeting" : "turn " + t.i) + (t.lat ? " · " + ms(t.lat) : "") + (t.p ? " · " + t.p : "");
      if (t.i === a.broke) label += " · broke here";
      turn.appendChild(el("div", "label mono", label));
      if (t.i > 0) turn.appendChild(el("div", "bubble user", t.say || "(silence)"));
      if (t.none) {
        turn.appendChild(el("div", "bubble agent none", "(no reply)"));
      } else {
        turn.appendChild(t.r ? longText("div", "bubble agent", t.r, t.rc) : el("div", "bubble agent none", "(no message)"));
        var facts = [];
        if (t.tr && t.tr.length) facts.push(["", "trace: " + t.tr.join(" → ")]);
        if (t.node) facts.push(["", "node: " + t.node]);
        if (t.st && t.st.length) facts.push(["", "state: ", t.st, t.stc]);
        if (t.ho) facts.push(["handoff", "handoff → " + t.ho]);
        if (t.del) facts.push(["", "delayed response"]);
        if (t.end) facts.push(["ended", "conversation ended"]);
        (t.ev || []).forEach(function (e) { facts.push(["", e]); });
        // How close each similar check came to its threshold.
        (t.sc || []).forEach(function (s) { facts.push([s.f ? "score failed" : s.n ? "score near" : "score", s.t]); });
        facts.forEach(function (f) {
          var line = el("div", "facts-turn mono " + f[0], f[1]);
          // The state's changes, each holding a long value cut as a
          // reply is.
          (f[2] || []).forEach(function (ch, i) {
            if (i) line.appendChild(document.createTextNode(", "));
            line.appendChild(longText("span", "", ch, (f[3] || [])[i]));
          });
          turn.appendChild(line);
        });
      }
      box.appendChild(turn);
    });
    return box;
  }

  // caseLink is the case the address's fragment names (#case-12, the
  // link in an opened case), -1 when it names none.
  function caseLink() {
    var m = /^#case-(\d+)$/.exec(location.hash);
    return m && cases[+m[1]] ? +m[1] : -1;
  }

  // reveal shows case i opened, its row focused: drawn in the list (the
  // view cleared first when it hides the case) and scrolled to.
  function reveal(i) {
    var at = matches.indexOf(i);
    if (at < 0) {
      selected = {};
      query = search.value = "";
      chips.forEach(function (ch) { ch.setAttribute("aria-pressed", "false"); });
      apply();
      at = matches.indexOf(i);
    }
    while (rendered <= at) renderMore();
    var art = document.getElementById("case-" + i);
    var btn = art.querySelector(".row");
    if (btn.getAttribute("aria-expanded") !== "true") toggle(art, cases[i], btn);
    art.scrollIntoView();
    btn.focus({ preventScroll: true });
  }

  // The filters and the search are kept in the address's fragment, so a
  // link or a reload shows the same view. A link to a case stays while
  // no view is chosen.
  function writeHash() {
    var kinds = Object.keys(selected).filter(function (k) { return selected[k]; });
    var parts = [];
    if (kinds.length) parts.push("show=" + kinds.join(","));
    if (query) parts.push("q=" + encodeURIComponent(query));
    var h = parts.length ? "#" + parts.join("&") : "";
    if (h === location.hash || !h && caseLink() >= 0) return;
    try {
      history.replaceState(null, "", h || location.pathname + location.search);
    } catch (e) {
      // Some viewers of saved files refuse it; the view works without.
    }
  }

  function readHash() {
    location.hash.replace(/^#/, "").split("&").forEach(function (p) {
      var kv = p.split("=");
      // A filter the run has no case of keeps its chip hidden unless
      // the address names it: then it shows, pressed, so that the
      // reader of an empty list sees why and can release it. A kind no
      // report has is no filter.
      if (kv[0] === "show" && kv[1]) kv[1].split(",").forEach(function (k) {
        var ch = chips.filter(function (c) { return c.getAttribute("data-kind") === k; })[0];
        if (!ch) return;
        selected[k] = true;
        ch.hidden = false;
      });
      if (kv[0] === "q" && kv[1]) { try { query = decodeURIComponent(kv[1]); } catch (e) { query = ""; } }
    });
    search.value = query;
    chips.forEach(function (ch) { ch.setAttribute("aria-pressed", String(!!selected[ch.getAttribute("data-kind")])); });
  }

  chips.forEach(function (ch) {
    ch.addEventListener("click", function () {
      var k = ch.getAttribute("data-kind");
      selected[k] = !selected[k];
      ch.setAttribute("aria-pressed", String(selected[k]));
      apply();
    });
  });
  var timer = 0;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { query = search.value; apply(); }, 120);
  });
  more.addEventListener("click", renderMore);
  // The section links (and the header's link to the comparison) scroll
  // to their section and leave the view in the address, where a reader
  // copies it from or reloads it.
  Array.prototype.forEach.call(document.querySelectorAll('nav.toc a[href^="#"], #compare-status a'), function (a) {
    a.addEventListener("click", function (e) {
      var target = document.getElementById(a.getAttribute("href").slice(1));
      if (!target) return;
      e.preventDefault();
      target.scrollIntoView();
    });
  });
  // A view written into the address of the open page (a link to it
  // pasted in the same tab does not reload it) is shown; an anchor is
  // left to the browser.
  window.addEventListener("hashchange", function () {
    var h = location.hash.replace(/^#/, "");
    if (caseLink() >= 0) {
      reveal(caseLink());
      return;
    }
    if (h && !/(^|&)(show|q)=/.test(h)) return;
    selected = {};
    query = "";
    readHash();
    apply();
  });
  if ("IntersectionObserver" in window) {
    // Near the end of the list, draw the next page. Observing again after
    // each page makes the observer report the button's position anew, so
    // pages follow one another while the button stays in reach.
    var observer = new IntersectionObserver(function (entries) {
      if (!entries[0].isIntersecting || more.hidden) return;
      renderMore();
      observer.unobserve(more);
      observer.observe(more);
    }, { rootMargin: "600px" });
    observer.observe(more);
  }
  // The comparison's table cuts its long values as the cases do: the
  // page holds the whole in data-whole and its head as the text.
  Array.prototype.forEach.call(document.querySelectorAll("[data-whole]"), function (e) {
    var cut = e.textContent;
    e.textContent = "";
    cutText(e, e.getAttribute("data-whole"), cut);
  });
  readHash();
  apply();
  var linked = caseLink();
  if (linked >= 0) {
    reveal(linked);
    // The browser's own jump to the anchor, by the time the page has
    // loaded, takes the focus from the row (Chromium leaves it on the
    // body): the row takes it back.
    window.addEventListener("load", function () { reveal(linked); });
  }
  document.documentElement.setAttribute("data-ready", "true");
})();
