#!/usr/bin/env bash
# Reproduces every figure of BENCHMARKS.md.
#
#   scripts/bench.sh            # everything (over 55 minutes on 2 cores: paced alone takes about 35)
#   scripts/bench.sh ratio      # runner vs bare HTTP loop (target: >= 0.9)
#   scripts/bench.sh latency    # 1,000 x 5 turns at --parallel 100, 100 ms (target: <= 1.1x ideal)
#   scripts/bench.sh rss        # peak RSS of the CLI at 20,000 scenarios (target: < 256 MB)
#   scripts/bench.sh html       # HTML report of 20,000 scenarios: size, and time for headless Chromium to open it
#   scripts/bench.sh sim        # the simulator's own throughput, for context
#   scripts/bench.sh messaging  # 1,000 conversations x 5 turns: Messaging vs debug chat
#   scripts/bench.sh features   # 500 conversations as a feature vs as YAML (target: <= 1.2 without latency)
#   scripts/bench.sh stats      # sequential test: runs used vs the fixed design (target: mean <= 60%)
#   scripts/bench.sh paced      # 500 x 6 calls against sim --rate 20, --parallel 8..512, with and without latency (~35 minutes;
#                               # PACED_P="128" runs one --parallel, with and without latency)
#   scripts/bench.sh spent      # the same at --parallel 8..512 (no latency), the key's bucket spent just before the run (~10 minutes)
#   scripts/bench.sh greedy     # 300 x 6 calls, 500 ms + up to 2 s per call, --parallel 50, no rate limit (target: <= 1.02x greedy)
#   scripts/bench.sh scale      # 10,000 and 100,000 one-turn scenarios, embedded simulator, --junit --json (target: < 400 MB, <= 1.3x per scenario)
#   scripts/bench.sh botium     # the same conversations through Botium (botium-cli, pinned in scripts/botium) and agenttest: wall and peak RSS (target: >= 12x faster, <= 1/4 of its memory)
#                               # BOTIUM_N="500 2000" conversations, ROUNDS=3 alternating rounds, BOTIUM_PARALLEL=100; needs Node.js and npm
#
# COUNT (default 5) sets the repeats of the Go benchmarks; report the median.
# The RSS run starts the simulator as a separate process (agenttest sim
# --print-env) so the harness's RSS is measured alone; AGENTTEST_BIN runs
# a prebuilt binary instead of building ./cmd/agenttest.
set -euo pipefail

cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
N=${N:-20000}
PARALLEL=${PARALLEL:-100}
work=$(mktemp -d)
sim_pid=""
cleanup() {
	if [[ -n $sim_pid ]]; then kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

machine() {
	echo "== machine"
	echo "nproc: $(nproc)"
	grep -m1 'model name' /proc/cpuinfo | sed 's/.*: /cpu: /'
	go version
}

ratio() {
	echo "== runner vs bare HTTP loop (runner/bare, alternating rounds; target >= 0.9)"
	go test -run '^$' -bench 'RunnerVsBare$' -benchtime 8x -count "$COUNT" ./internal/runner | grep -E '^Benchmark'
	echo "== turns/s: runner, bare loop, platform client alone"
	go test -run '^$' -bench 'Runner$|BareLoop$|ClientLoop$' -benchtime 5000x -count "$COUNT" ./internal/runner | grep -E '^Benchmark'
	echo "== turn decoding"
	go test -run '^$' -bench 'DecodeTurn$' -count "$COUNT" ./internal/platform | grep -E '^Benchmark'
}

latency() {
	echo "== latency-bound: 1,000 scenarios x 5 turns, --parallel 100, 100 ms per call (target x-ideal <= 1.1)"
	go test -run '^$' -bench 'LatencyBound$' -benchtime 1x -count "$COUNT" ./internal/runner | grep -E '^Benchmark'
}

# gen_suite DIR N writes N booking scenarios (greeting + 4 turns, the same
# checks as the runner benchmarks) into DIR, 1,000 per file.
gen_suite() {
	local dir=$1 n=$2 per=1000 f i
	mkdir -p "$dir"
	for ((f = 0; f * per < n; f++)); do
		{
			echo "suite: rss $f"
			echo "agent: restaurant"
			echo "env: sandbox"
			echo "scenarios:"
			for ((i = f * per; i < (f + 1) * per && i < n; i++)); do
				cat <<YAML
  - name: books a table $i
    greeting: {response: {contains: Welcome}}
    turns:
      - say: I'd like to book a table
        expect:
          response: {contains: how many, ignore_case: true}
          trace: {includes: [CollectPartySize]}
      - say: 4 people at 7pm
        expect:
          state: {party_size: "4", time: "19:00"}
          node: ConfirmBooking
        capture: {ref: {response: 'reference ([A-Z0-9]+)'}}
      - say: what was my reference?
        expect: {response: {contains: "\${ref}"}}
      - say: thanks, bye
        expect: {ended: true}
YAML
			done
		} >"$dir/rss-$f.yaml"
	done
}

# peak_rss LABEL ARGS... runs agenttest against the external simulator and
# prints its peak RSS (VmHWM, via GNU time) and wall time.
peak_rss() {
	local label=$1
	shift
	local out="$work/time-$label.txt"
	# Run from the work directory, so the suite path in the logs is short.
	if (cd "$work" && /usr/bin/time -v ./agenttest run --parallel "$PARALLEL" "$@" suite) >"$work/run-$label.log" 2>"$out"; then
		:
	else
		echo "run $label failed (exit $?); last lines:"
		tail -n 5 "$work/run-$label.log"; head -n 5 "$out"
		return 1
	fi
	local kb wall
	kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out")
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out")
	echo "$label: peak RSS $((kb / 1024)) MB, wall $wall, $(tail -1 "$work/run-$label.log")"
}

# start_sim starts agenttest sim in its own process (sim_pid; cleanup
# stops it) and exports the AGENTTEST_* settings it prints. Its store-cap
# bounds the simulator, which is not what is measured.
start_sim() {
	"$work/agenttest" sim --print-env --store-cap 1000 >"$work/sim.env" 2>"$work/sim.err" &
	sim_pid=$!
	for _ in $(seq 100); do
		grep -q AGENTTEST_BUILD_KEY "$work/sim.env" 2>/dev/null && break
		sleep 0.1
	done
	set -a
	# shellcheck disable=SC1091
	source <(grep '^AGENTTEST_' "$work/sim.env" | sed 's/^export //')
	set +a
}

rss() {
	[[ -x /usr/bin/time ]] || { echo "rss needs GNU time: apt-get install time" >&2; return 1; }
	echo "== peak RSS of agenttest run, $N scenarios x 5 turns at --parallel $PARALLEL, simulator in another process (target < 256 MB)"
	build_bin
	gen_suite "$work/suite" "$N"
	start_sim
	peak_rss plain
	peak_rss reports --junit junit.xml --json report.json --html report.html
	ls -l "$work/junit.xml" "$work/report.json" "$work/report.html" | awk '{print "  " $5 " bytes " $NF}'
	local sim_kb
	sim_kb=$(awk '/VmHWM/ {print $2}' "/proc/$sim_pid/status")
	echo "simulator process (not counted): peak RSS $((sim_kb / 1024)) MB"
}

# html: the size of the HTML report of a large run, and how long headless
# Chromium takes to open it, run its script and paint its first screen
# (--screenshot returns after the load event, by which the script has drawn
# the first page of cases), against the same for an empty page: the
# difference is the report's own cost, browser start excluded.
html() {
	local chrome
	chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
	[[ -n $chrome ]] || { echo "html needs Chromium: apt-get install chromium" >&2; return 1; }
	echo "== HTML report of $N scenarios x 5 turns: size, and time for headless Chromium to open and paint it"
	build_bin
	gen_suite "$work/suite" "$N"
	(cd "$work" && ./agenttest run suite --parallel "$PARALLEL" --html report.html >/dev/null)
	ls -l "$work/report.html" | awk '{print "  " $5 " bytes " $NF}'
	echo '<!DOCTYPE html><title>empty</title>' >"$work/empty.html"
	for page in empty.html report.html empty.html report.html empty.html report.html; do
		/usr/bin/time -f "  $page: %e s wall, peak RSS %M KB" "$chrome" --headless --no-sandbox --disable-gpu \
			--disable-dev-shm-usage --window-size=1200,900 --screenshot="$work/shot.png" "file://$work/$page" 2>&1 >/dev/null |
			grep "^  $page"
	done
}

features() {
	echo "== feature files vs YAML: 500 conversations at --parallel 50 (feature/yaml; target <= 1.2 without latency)"
	go test -run '^$' -bench 'FeatureVsYAML$' -benchtime 4x -count 3 ./internal/runner | grep -E '^Benchmark'
}

stats() {
	echo "== statistical scenarios: 20,000 simulated streams per true rate (mean and p95 runs vs the fixed design)"
	go test -run '^$' -bench 'SequentialRuns$' -benchtime 20000x ./internal/stats | grep -E '^Benchmark'
	go test -run 'Simulated' -v -count 1 ./internal/stats | grep -E 'rate|limit'
}

# build_bin puts agenttest in $work (AGENTTEST_BIN: a prebuilt one).
build_bin() {
	[[ -x $work/agenttest ]] && return
	if [[ -n ${AGENTTEST_BIN:-} ]]; then
		cp "$AGENTTEST_BIN" "$work/agenttest"
	else
		go build -o "$work/agenttest" ./cmd/agenttest
	fi
}

# gen_calls DIR N writes N scenarios of 6 calls (greeting + 5 turns).
gen_calls() {
	local dir=$1 n=$2 i t
	mkdir -p "$dir"
	{
		echo "suite: paced"
		echo "agent: restaurant"
		echo "scenarios:"
		for ((i = 0; i < n; i++)); do
			printf '  - name: six calls %d\n    greeting: {node: Greeting}\n    turns:\n' "$i"
			for t in 1 2 3 4 5; do printf '      - say: when are you open?\n        expect: {node: AnswerQuestion}\n'; done
		done
	} >"$dir/paced.yaml"
}

# spend_key sends debug-chat requests with the simulator's build key
# until one is refused (429): the key's bucket is then empty, as the job
# before on the same key leaves it.
spend_key() {
	command -v curl >/dev/null || { echo "spent needs curl" >&2; return 1; }
	local code
	for _ in $(seq 1000); do
		code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "x-api-key: $AGENTTEST_BUILD_KEY" \
			-H 'Content-Type: application/json' -d '{"clientEnv":"sandbox"}' \
			"$AGENTTEST_BUILD_URL/v1/agents/$AGENTTEST_AGENT_ID/debug-chat")
		[[ $code == 429 ]] && return
	done
	echo "spend_key: no 429 in 1,000 requests" >&2
	return 1
}

# against LABEL "SIM FLAGS" RUN FLAGS... runs the suite in $work/calls
# against `agenttest sim` started with SIM FLAGS in its own process, and
# prints the figures of scripts/pacing from the JSON report. With SPEND
# set, the key's bucket is spent first (spend_key).
against() {
	local label=$1 simflags=$2
	shift 2
	"$work/agenttest" sim --print-env --store-cap 1000 $simflags >"$work/sim-$label.env" 2>/dev/null &
	local pid=$!
	for _ in $(seq 100); do
		grep -q AGENTTEST_BUILD_KEY "$work/sim-$label.env" 2>/dev/null && break
		sleep 0.1
	done
	local code=0
	(
		set -a
		# shellcheck disable=SC1090
		source <(grep '^AGENTTEST_' "$work/sim-$label.env" | sed 's/^export //')
		if [[ -n ${SPEND:-} ]]; then spend_key; fi
		cd "$work/calls" && "$work/agenttest" run "$@" --json "$work/$label.json" suite >"$work/run-$label.log"
	) || code=$?
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	echo "-- $label: exit $code; $(grep '^paced at' "$work/run-$label.log" || echo 'no pacing line')"
	go run ./scripts/pacing -report "$work/$label.json" "${pacing_args[@]}"
}

paced() {
	echo "== 500 scenarios x 6 calls against sim --rate 20 (targets: exit 0, no errored or flaky case, <= 1.1x ideal, 429s <= 5% of calls)"
	build_bin
	gen_calls "$work/calls/suite" 500
	local p
	for lat in "" "--latency 500ms --jitter 2s"; do
		for p in ${PACED_P:-8 32 128 512}; do
			pacing_args=(-parallel "$p" -rate 20 -burst 20)
			against "rate20-p$p${lat:+-latency}" "--rate 20 $lat" --parallel "$p"
		done
	done
}

spent() {
	echo "== 500 scenarios x 6 calls against sim --rate 20 whose key's bucket was spent just before (targets as paced; the ideal has no burst)"
	build_bin
	gen_calls "$work/calls/suite" 500
	local p
	for p in 8 32 128 512; do
		pacing_args=(-parallel "$p" -rate 20 -burst 0)
		SPEND=1 against "spent-p$p" "--rate 20" --parallel "$p"
	done
}

greedy() {
	echo "== 300 scenarios x 6 calls, 500 ms + up to 2 s per call, no rate limit, --parallel 50 (target: <= 1.02x the greedy schedule)"
	build_bin
	gen_calls "$work/calls/suite" 300
	pacing_args=(-parallel 50)
	against "latency-p50" "--latency 500ms --jitter 2s" --parallel 50
}

# gen_one_turn DIR N writes N one-turn scenarios, 1,000 per file.
gen_one_turn() {
	local dir=$1 n=$2 per=1000 f i
	mkdir -p "$dir"
	for ((f = 0; f * per < n; f++)); do
		{
			echo "suite: scale $f"
			echo "agent: restaurant"
			echo "scenarios:"
			for ((i = f * per; i < (f + 1) * per && i < n; i++)); do
				printf '  - name: opening hours %d\n    greeting: {node: Greeting}\n    turns:\n      - say: when are you open?\n' "$i"
			done
		} >"$dir/scale-$f.yaml"
	done
}

scale() {
	[[ -x /usr/bin/time ]] || { echo "scale needs GNU time: apt-get install time" >&2; return 1; }
	echo "== one-turn scenarios against the embedded simulator with --junit --json (targets: peak RSS < 400 MB at 100,000; time per scenario at 100,000 <= 1.3x that at 10,000)"
	build_bin
	local n
	for n in 10000 100000; do
		gen_one_turn "$work/scale-$n/suite" "$n"
		(cd "$work/scale-$n" && /usr/bin/time -v "$work/agenttest" run --junit junit.xml --json report.json suite >run.log 2>time.txt) || {
			echo "run of $n failed"; tail -n 5 "$work/scale-$n/run.log"; return 1
		}
		local kb wall bytes
		kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/scale-$n/time.txt")
		wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/scale-$n/time.txt")
		bytes=$(stat -c %s "$work/scale-$n/report.json")
		echo "$n scenarios: wall $wall, peak RSS $((kb / 1024)) MB, JSON report $bytes bytes ($((bytes / (2 * n))) per turn)"
	done
}

sim() {
	echo "== simulator throughput (debug-chat turns over loopback HTTP)"
	go test -run '^$' -bench 'DebugChatTurn$' -benchtime 3s -count "$COUNT" ./internal/sim | grep -E '^Benchmark'
}

messaging() {
	echo "== 1,000 conversations (greeting + 5 turns, 50 at a time) through the client: Messaging vs debug chat"
	go test -run '^$' -bench 'Conversations$' -benchtime 3x -count "$COUNT" ./internal/platform | grep -E '^Benchmark'
	echo "== 1,000 scenarios (greeting + 5 turns, 50 at a time) through the runner: Messaging vs debug chat"
	go test -run '^$' -bench 'RunnerMessaging' -benchtime 3x -count "$COUNT" ./internal/runner | grep -E '^Benchmark'
}

# gen_convos DIR N writes Botium's side of gen_suite: the same N
# conversations with the same checks, one .convo.txt each (a Botium convo
# file holds one conversation). Text checks are Botium's default matching
# (wildcardIgnoreCase: a case-insensitive substring without a '*'); node,
# trace, state and the end are JSON_PATH asserters on the reply body; the
# reference is captured by Botium's scripting memory ($ref, 'word' mode in
# scripts/botium/botium.json) and expected back in the next reply.
gen_convos() {
	local dir=$1 n=$2 i body
	mkdir -p "$dir"
	for ((i = 0; i < n; i++)); do
		# printf and the redirection are builtins: no process per file.
		printf -v body '%s\n' "books a table $i" "" \
			"#bot" "Welcome" "" \
			"#me" "I'd like to book a table" "" \
			"#bot" "how many" 'JSON_PATH $.metadata.nodeTrace[*]|CollectPartySize' "" \
			"#me" "4 people at 7pm" "" \
			"#bot" 'reference $ref' 'JSON_PATH $.metadata.state.party_size|4' 'JSON_PATH $.metadata.state.time|19:00' \
			'JSON_PATH $.metadata.currentNode|ConfirmBooking' "" \
			"#me" "what was my reference?" "" \
			"#bot" '$ref' "" \
			"#me" "thanks, bye" "" \
			"#bot" 'JSON_PATH $.conversationEnded|true'
		printf '%s' "$body" >"$dir/books-a-table-$i.convo.txt"
	done
}

# timed LABEL N ROUND DIR CMD... runs CMD in DIR under GNU time, checks
# that every one of the N conversations passed, and appends "label n round
# wall_s rss_kb" to $work/botium.tsv.
timed() {
	local label=$1 n=$2 round=$3 dir=$4
	shift 4
	local log="$work/$label-$n-$round.log" tf="$work/$label-$n-$round.time" code=0 passed load
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	local t0=$EPOCHREALTIME
	# GNU time gives the peak RSS (%M); the wall clock is bash's, as %e
	# counts in steps of 10 ms.
	(cd "$dir" && /usr/bin/time -f '%M' -o "$tf" "$@") >"$log" 2>&1 || code=$?
	local t1=$EPOCHREALTIME
	# botium-cli exits with its count of failures (modulo 256), so its
	# summary is read too: "N passing" and no "M failing".
	if [[ $label == botium ]]; then
		passed=$(grep -oE '^ *[0-9]+ passing' "$log" | grep -oE '[0-9]+' || echo 0)
		if grep -qE '^ *[0-9]+ failing' "$log"; then passed=0; fi
	elif [[ $label == bare-* ]]; then
		# barechat checks only that every call was answered 200.
		passed=$(grep -oE '^[0-9]+ conversations, [0-9]+ calls answered 200' "$log" | grep -oE '^[0-9]+' || echo 0)
	else
		passed=$(grep -oE '^[0-9]+ passed, 0 failed' "$log" | grep -oE '^[0-9]+' || echo 0)
	fi
	if [[ $code -ne 0 || $passed -ne $n ]]; then
		echo "$label, $n conversations, round $round: exit $code, $passed of $n passed; the comparison is void. Last lines:"
		tail -n 15 "$log"
		return 1
	fi
	local wall kb
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	kb=$(tail -n 1 "$tf")
	printf '%s\t%s\t%s\t%s\t%s\n' "$label" "$n" "$round" "$wall" "$kb" >>"$work/botium.tsv"
	printf '  %-14s n=%-5s round %s: wall %7.3f s, peak RSS %4d MB, %s of %s passed, exit 0 (load average %s)\n' \
		"$label" "$n" "$round" "$wall" $((kb / 1024)) "$passed" "$n" "$load"
}

# botium: Botium (botium-cli, botium-core's SIMPLEREST connector, pinned by
# scripts/botium/package-lock.json) and agenttest run the same
# conversations (greeting + 4 turns, each reply checked) against one
# `agenttest sim` process. botium-cli runs its convos one after another (a
# single Mocha suite; it has no concurrency option), so agenttest is
# measured at --parallel 1 as well as at its default (8) and at
# BOTIUM_PARALLEL (default 100). A fourth side, bare-p1, is
# scripts/barechat: the same calls one after another over plain net/http,
# checking only their status, the floor of any client at one conversation
# at a time against this simulator. Rounds alternate the sides so that
# load from other jobs lands on each alike; medians and ratios follow.
botium() {
	[[ -x /usr/bin/time ]] || { echo "botium needs GNU time: apt-get install time" >&2; return 1; }
	command -v node >/dev/null || { echo "botium needs Node.js and npm" >&2; return 1; }
	local sizes=${BOTIUM_N:-500 2000} rounds=${ROUNDS:-3} big=${BOTIUM_PARALLEL:-100} n r p
	local cli=$PWD/scripts/botium/node_modules/botium-cli/bin/botium-cli.js config=$PWD/scripts/botium/botium.json
	if [[ ! -f $cli ]]; then
		echo "installing Botium: npm ci in scripts/botium"
		(cd scripts/botium && npm ci --no-audit --no-fund --loglevel=error)
	fi
	echo "node $(node --version), botium-cli $(node -p "require('$PWD/scripts/botium/node_modules/botium-cli/package.json').version")," \
		"botium-core $(node -p "require('$PWD/scripts/botium/node_modules/botium-core/package.json').version")"
	echo "== Botium vs agenttest: N conversations (greeting + 4 turns, every reply checked) against agenttest sim in its own process, $rounds alternating rounds (target: >= 12x faster, <= 1/4 of Botium's peak RSS)"
	build_bin
	go build -o "$work/barechat" ./scripts/barechat
	start_sim
	# Botium's own usage report (a POST to registration.botiumbox.com) off:
	# it is not part of the work, and nothing leaves the machine.
	export BOTIUM_ANALYTICS=false
	: >"$work/botium.tsv"
	for n in $sizes; do
		gen_suite "$work/b$n/suite" "$n"
		gen_convos "$work/b$n/convos" "$n"
		for ((r = 1; r <= rounds; r++)); do
			timed botium "$n" "$r" "$work/b$n" node "$cli" run min --config "$config" --convos convos --timeout 600 || return 1
			for p in 1 8 "$big"; do
				timed "agenttest-p$p" "$n" "$r" "$work/b$n" "$work/agenttest" run --parallel "$p" suite || return 1
			done
			timed bare-p1 "$n" "$r" "$work/b$n" "$work/barechat" -n "$n" || return 1
		done
	done
	echo "== medians (wall s, peak RSS MB) and ratios to Botium (speed = Botium wall / agenttest wall; memory = agenttest RSS / Botium RSS)"
	awk -F'\t' '
		function median(list,   v, cnt, i, j, t) {
			cnt = split(list, v, " ")
			for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
			return cnt % 2 ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2
		}
		{ k = $1 " " $2; if (!(k in w)) order[++m] = k; w[k] = w[k] " " $4; r[k] = r[k] " " $5 }
		END {
			for (i = 1; i <= m; i++) { k = order[i]; mw[k] = median(w[k]); mr[k] = median(r[k]) }
			for (i = 1; i <= m; i++) {
				k = order[i]; split(k, p, " "); b = "botium " p[2]
				printf "  %-14s n=%-5s wall %7.3f s  peak RSS %4.0f MB", p[1], p[2], mw[k], mr[k] / 1024
				if (p[1] != "botium") printf "  %5.1fx faster, %4.1f%% of its peak RSS", mw[b] / mw[k], 100 * mr[k] / mr[b]
				printf "\n"
			}
		}' "$work/botium.tsv"
	echo "simulator process (not counted): peak RSS $(($(awk '/VmHWM/ {print $2}' "/proc/$sim_pid/status") / 1024)) MB"
}

machine
case ${1:-all} in
ratio) ratio ;;
latency) latency ;;
rss) rss ;;
html) html ;;
sim) sim ;;
messaging) messaging ;;
features) features ;;
stats) stats ;;
paced) paced ;;
spent) spent ;;
greedy) greedy ;;
scale) scale ;;
botium) botium ;;
all) ratio; latency; rss; html; sim; messaging; features; stats; greedy; scale; paced; spent; botium ;;
*) echo "usage: $0 [ratio|latency|rss|html|sim|messaging|features|stats|paced|spent|greedy|scale|botium|all]" >&2; exit 2 ;;
esac
