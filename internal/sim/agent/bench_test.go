package agent

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSessionTurn plays the restaurant booking conversation; one op is
// one turn (a fresh session every script, as the server sees them).
func BenchmarkSessionTurn(b *testing.B) {
	def := builtin(b, "restaurant")
	script := []string{"I'd like to book a table", "4 people at 7pm", "what was my reference?", "do you have vegan food?", "thanks, bye"}
	rng := rand.New(rand.NewPCG(1, 2))
	var s *Session
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%len(script) == 0 {
			s = def.NewSession(SessionOptions{ConversationID: "bench", Rand: rng})
			s.Start()
		}
		s.Turn(script[i%len(script)], nil)
		i++
	}
}

// BenchmarkSessionTurnParallel shows turns of many sessions sharing one
// Definition scale across cores.
func BenchmarkSessionTurnParallel(b *testing.B) {
	def := builtin(b, "utility-billing")
	script := []string{"my account is 12345678", "SW1A 1AA", "payment plan please", "", "bye"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(3, 4))
		var s *Session
		i := 0
		for pb.Next() {
			if i%len(script) == 0 {
				s = def.NewSession(SessionOptions{ConversationID: "bench", Rand: rng})
				s.Start()
			}
			s.Turn(script[i%len(script)], nil)
			i++
		}
	})
}
