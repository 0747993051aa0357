package sheetsio

import (
	"context"
	"testing"
)

// A context carries one read priority under one key: normal unless
// marked; urgent outranks background whichever mark came first (a read a
// person waits on stays urgent inside a scheduled pass), as the two
// marks did when each had its own key.
func TestReadPriorityOfAMarkedContext(t *testing.T) {
	bg := context.Background()
	cases := []struct {
		name string
		ctx  context.Context
		want Priority
	}{
		{"unmarked", bg, PriorityNormal},
		{"urgent", WithReadPriority(bg, PriorityUrgent), PriorityUrgent},
		{"background", WithReadPriority(bg, PriorityBackground), PriorityBackground},
		{"normal mark", WithReadPriority(bg, PriorityNormal), PriorityNormal},
		{"background inside urgent", WithReadPriority(WithReadPriority(bg, PriorityUrgent), PriorityBackground), PriorityUrgent},
		{"urgent inside background", WithReadPriority(WithReadPriority(bg, PriorityBackground), PriorityUrgent), PriorityUrgent},
		{"normal inside background", WithReadPriority(WithReadPriority(bg, PriorityBackground), PriorityNormal), PriorityBackground},
	}
	for _, c := range cases {
		if got := ReadPriority(c.ctx); got != c.want {
			t.Errorf("%s: ReadPriority = %v, want %v", c.name, got, c.want)
		}
	}
	if s := PriorityBackground.String(); s != "background" {
		t.Errorf("PriorityBackground.String() = %q", s)
	}
}
