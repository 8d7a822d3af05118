package sim

import (
	"fmt"
	"testing"
	"time"
)

func TestStoreEvictsOldestEndedFirst(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := NewStore(3)
	mk := func(i int) *Conversation {
		return &Conversation{ID: fmt.Sprintf("c%d", i), ProjectID: "p", StartedAt: base.Add(time.Duration(i) * time.Minute)}
	}
	c0, c1, c2 := mk(0), mk(1), mk(2)
	for _, c := range []*Conversation{c0, c1, c2} {
		if !s.Add(c) {
			t.Fatalf("add %s", c.ID)
		}
	}
	if s.Add(mk(1)) {
		t.Fatal("duplicate id accepted")
	}
	// c0 stays in progress; c1 and c2 end. The oldest ended (c1) goes first.
	s.End(c2, base.Add(time.Hour), false)
	s.End(c1, base.Add(time.Hour), false)
	s.Add(mk(3))
	if _, ok := s.Get("c1"); ok {
		t.Error("c1, the oldest ended, was kept")
	}
	if _, ok := s.Get("c0"); !ok {
		t.Error("c0, in progress, was evicted")
	}
	s.Add(mk(4))
	if _, ok := s.Get("c2"); ok {
		t.Error("c2 was kept")
	}
	// Only in-progress conversations remain: the cap yields rather than
	// cutting a live session.
	s.Add(mk(5))
	if s.Len() != 4 {
		t.Errorf("len %d, want 4", s.Len())
	}
	got := s.Select("p", func(*Conversation) bool { return true })
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID)
	}
	if fmt.Sprint(ids) != "[c0 c3 c4 c5]" {
		t.Errorf("order %v", ids)
	}
}

func TestStoreSharedIDForgottenOnEviction(t *testing.T) {
	t.Parallel()
	s := NewStore(1)
	c := &Conversation{ID: "a", ProjectID: "p", StartedAt: time.Unix(1, 0)}
	s.Add(c)
	c.AppendTurn(Turn{}, TurnUpdate{Handoff: &HandoffRecord{SharedID: "x"}})
	s.IndexSharedID(c, "x")
	if _, ok := s.BySharedID("p", "x"); !ok {
		t.Fatal("shared id not indexed")
	}
	s.End(c, time.Unix(2, 0), false)
	s.Add(&Conversation{ID: "b", ProjectID: "p", StartedAt: time.Unix(3, 0)})
	if _, ok := s.BySharedID("p", "x"); ok {
		t.Error("evicted conversation still found by shared id")
	}
}

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	n := int64(123456789)
	o := 40
	for _, c := range []cursor{{T: &n, ID: "conv-1"}, {O: &o}} {
		got, err := decodeCursor(encodeCursor(c))
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if encodeCursor(*got) != encodeCursor(c) {
			t.Errorf("round trip changed %v", c)
		}
	}
	for _, bad := range []string{"", "!!!", "e30", "eyJ0IjoxfQ", "eyJvIjotMX0"} {
		if _, err := decodeCursor(bad); err == nil {
			t.Errorf("cursor %q accepted", bad)
		}
	}
}
