package secret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
)

// TestLearn: a key learnt after the redactor was built is masked, in
// every form, by the redactor, by a redactor made from it by With before
// it was learnt (with that one's own key still masked), by a writer and a
// stream made before it was learnt, the stream in the text it held
// already; the redactor keeps the pairs its scans skip by.
func TestLearn(t *testing.T) {
	t.Parallel()
	const built, learnt, session = "built-key-0123456789", "whsec_learnt-7d2a9c41e0", "session-token-9876543210"
	r := mustNew(t, built)
	ext, err := r.With(session)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := r.Writer(&out)
	stream := ext.Stream()
	stream.Append("before: " + learnt + " ")
	if got := r.String(learnt); got != learnt {
		t.Fatalf("masked before it was learnt: %q", got)
	}

	if err := r.Learn("the signing secret", learnt); err != nil {
		t.Fatal(err)
	}
	stream.Append("after: " + session)
	for _, form := range Forms(learnt) {
		text := "a " + form + " b " + built
		for name, got := range map[string]string{
			"redactor":         r.String(text),
			"bytes":            string(r.Bytes([]byte(text))),
			"error":            r.Error(errors.New(text)).Error(),
			"made before, too": ext.String(text + " " + session),
		} {
			if f := leftover(got, learnt); f != "" || strings.Contains(got, built) || strings.Contains(got, session) {
				t.Errorf("%s: %q left in %q", name, form, got)
			}
		}
	}
	w.Write([]byte("written: " + base64.StdEncoding.EncodeToString([]byte(learnt)) + "\n"))
	if got := out.String(); got != "written: "+Mask+"\n" {
		t.Errorf("writer: %q", got)
	}
	if got := stream.String(); got != "before: "+Mask+" after: "+Mask {
		t.Errorf("stream: %q", got)
	}
	if got := r.current().minLen; got < 3 {
		t.Errorf("minLen %d after learning: the scans no longer skip", got)
	}
	// A key learnt twice, or one the redactor has, changes nothing.
	before := r.current()
	for _, k := range []string{learnt, built} {
		if err := r.Learn("again", k); err != nil || r.current() != before {
			t.Errorf("learning %q again: %v, table changed %v", k, err, r.current() != before)
		}
	}
}

// TestLearnRefuses: a key CheckKey refuses is not learnt, and the error
// names it by what without showing it; a nil redactor has nowhere to
// keep a key.
func TestLearnRefuses(t *testing.T) {
	t.Parallel()
	r := mustNew(t, "built-key-0123456789")
	err := r.Learn("the signing secret", "short-7")
	if err == nil || !strings.HasPrefix(err.Error(), "the signing secret is 7 characters long") || strings.Contains(err.Error(), "short-7") {
		t.Errorf("short key: %v", err)
	}
	if got := r.String("a short-7 b"); got != "a short-7 b" {
		t.Errorf("a refused key was learnt: %q", got)
	}
	var none *Redactor
	if err := none.Learn("the signing secret", "long-enough-key-0123"); err == nil {
		t.Error("a nil redactor learnt a key")
	}
}

// TestLearnConcurrent: scans under way while keys are learnt, on the
// redactor and on one made from it, see either key set, never a broken
// one; every learnt key is masked once Learn returns (go test -race).
func TestLearnConcurrent(t *testing.T) {
	t.Parallel()
	r := mustNew(t, "built-key-0123456789")
	ext, err := r.With("session-token-9876543210")
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"learnt-key-a-0123456789", "learnt-key-b-0123456789", "learnt-key-c-0123456789", "learnt-key-d-0123456789"}
	text := "x built-key-0123456789 " + strings.Join(keys, " ") + " session-token-9876543210 y"
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() {
			if err := r.Learn("key", k); err != nil {
				t.Error(err)
			}
			for _, red := range []*Redactor{r, ext} {
				if got := red.String(text); strings.Contains(got, k) || strings.Contains(got, "built-key") {
					t.Errorf("%q learnt, yet left in %q", k, got)
				}
			}
		})
		wg.Go(func() {
			for range 50 {
				ext.String(text)
				r.Contains(text)
			}
		})
	}
	wg.Wait()
	if got := ext.String(text); got != "x "+strings.Repeat(Mask+" ", len(keys)+2)+"y" {
		t.Errorf("after every Learn: %q", got)
	}
}
