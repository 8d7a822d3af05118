// Package secret decides what an API key looks like in every form a server,
// a proxy or a report can carry it, and removes it from text.
//
// agenttest holds workspace-wide keys. A misbehaving platform or proxy may
// echo a request header back in an error body, an HTML page or an agent's
// reply, and not always verbatim: JSON encoders escape characters as \uXXXX
// (PHP also writes \/ for /), URLs carry it percent-encoded, a suite may
// quote it into a regular expression, and a gateway may show the base64 or
// the hex of it. A Redactor built once per key set finds all of these:
//
//   - raw: the key itself;
//   - JSON-escaped: any subset of its characters as \uXXXX (either hex
//     case, surrogate pairs beyond the BMP), the short escapes \" \\ \/ \n
//     ..., and the same text escaped a second time (JSON inside a JSON
//     string);
//   - URL-encoded: any subset of its bytes as %XX (either hex case), + for a
//     space;
//   - regex-quoted: regexp.QuoteMeta of it, raw or inside JSON or a URL;
//   - HTML/XML character references: by name for & < > " ', and
//     numeric (decimal or hex) for every character but an ASCII letter
//     or digit (Go's html/template writes + as &#43;, .NET é as &#233;,
//     OWASP ESAPI / as &#x2f;);
//   - base64 of it (standard and URL alphabets, padded or not), also when it
//     sits inside a longer base64 text at any alignment;
//   - the hex of its bytes, in either case;
//   - UTF-16 of it, either byte order (a server answering in a UTF-16
//     charset), also passed on by a text that reads its bytes as Latin-1:
//     the NULs raw or rendered as \u0000 or \x00, the bytes past 0x7f
//     raw, as UTF-8 or as \u00XX.
//
// A key that terminal escape sequences part (a colour a server's log
// style puts on a part of it: "sk-live-\x1b[1m0123...\x1b[0m") is found
// in the text without them, as the report files show it once they drop
// them; the text then loses its escapes with the key.
//
// Each character of a key may take any of its forms independently, so
// mixtures (a proxy that escapes only some characters) are found too;
// the key may come in upper case, lower case or capitalised (a server
// that shouts its errors); and its base64 may be broken across lines
// (MIME, PEM, Python's base64.encodebytes), raw or JSON-escaped.
//
// Redaction applies to values that come from outside (server bodies,
// headers, agent replies, user files) before they are stored, never to
// agenttest's own structure (element names, JSON keys of a report): a
// report is written from values that are already clean, so a key equal to
// a word of the report's schema cannot corrupt it.
//
//	r, err := secret.New(buildKey, runtimeKey) // each at least MinLen long
//	if err != nil { ... }
//	clean := r.String(serverText)
//	body := r.JSON(responseBody) // stays valid JSON
//
// A secret known only at run time (the signing secret a platform issues
// for a webhook endpoint) is learnt by the redactor that is already in
// use: Learn adds its forms, and every holder of the redactor, and of one
// made from it by With, masks it from then on, safely while others scan.
// A command keeps one redactor, so there is no second list of late
// secrets to forget.
//
//	if err := r.Learn("the signing secret", issued); err != nil { ... }
//
// A text that arrives in pieces (a reply streamed in chunks) is kept in a
// Stream: each Append redacts the text so far as String would, but scans
// only where a form can newly end, so a key the pieces spell between them
// is masked at a cost linear in the text, not in its length times its
// pieces.
//
// A nil *Redactor redacts nothing, so optional wiring needs no checks.
package secret
