package assert

import (
	"fmt"
	"math"
	"testing"
)

func TestSimilarity(t *testing.T) {
	type testCase struct {
		name     string
		a, b     string
		min, max float64
	}
	run := func(t *testing.T, tc testCase) {
		got := Similarity(tc.a, tc.b)
		if !(got >= tc.min && got <= tc.max) { // NaN is out of every range
			t.Errorf("Similarity(%q, %q) = %.3f, want in [%.2f, %.2f]", tc.a, tc.b, got, tc.min, tc.max)
		}
		if back := Similarity(tc.b, tc.a); math.Abs(back-got) > 1e-12 {
			t.Errorf("not symmetric: %.6f vs %.6f", got, back)
		}
	}
	cases := []testCase{
		{"same sentence", "How many people will be joining you?", "How many people will be joining you?", 1, 1},
		{"same ignoring case and punctuation", "How many people, will be joining you?", "how many people will be joining you", 1, 1},
		{"plural folded", "Which tables are free?", "Which table are free?", 1, 1},
		{"contraction spelled out", "Sorry, I didn't catch that.", "Sorry, I did not catch that.", 1, 1},
		{"typographic contraction spelled out", "Sorry, I didn’t catch that.", "Sorry, I did not catch that.", 1, 1},
		{"three letters keep their s", "yes", "ye", 0, 0.5},
		{"a double s is no plural", "boss", "bos", 0, 0.5},
		{"words repeated alike", "Table, table, table!", "table table table", 1, 1},
		{"only stopwords, the same", "It is.", "it is!", 1, 1},
		{"rewording keeping the words", "How many people will be joining you?", "How many people are joining you?", 0.85, 0.95},
		{"reworded question", "What time would you like to book?", "At what time would you like the booking?", 0.65, 0.8},
		{"paraphrase with other words", "Your table for 4 is booked for 7pm.", "I've booked your table for four at 7pm.", 0.65, 0.8},
		{"same topic, other question", "How many people will be joining you?", "For how many people should I book the table?", 0.4, 0.55},
		{"unrelated", "How many people will be joining you?", "Our opening hours are 9am to 5pm on weekdays.", 0, 0.1},
		{"unrelated short", "I can help you with that.", "The weather is nice today.", 0, 0.1},
		{"only stopwords in common", "Is it you?", "It is raining for you", 0, 0.3},
		{"both empty", "", "  ", 1, 1},
		{"one empty", "", "hello", 0, 0},
		{"only punctuation", "?!", "...", 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// ExampleSimilarity shows the values the documentation quotes.
func ExampleSimilarity() {
	q := "How many people will be joining you?"
	fmt.Printf("%.2f\n", Similarity(q, "How many people are joining you?"))
	fmt.Printf("%.2f\n", Similarity("Your table for 4 is booked for 7pm.", "I've booked your table for four at 7pm."))
	fmt.Printf("%.2f\n", Similarity(q, "For how many people should I book the table?"))
	fmt.Printf("%.2f\n", Similarity(q, "Our opening hours are 9am to 5pm on weekdays."))
	// Output:
	// 0.91
	// 0.71
	// 0.48
	// 0.05
}

func BenchmarkSimilarity(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Similarity("How many people will be joining you tonight?", "How many people are joining you this evening?")
	}
}
