package engine

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/retention"
)

func TestRetentionStatusOfAStandbySaysItDoesNotRun(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want RetentionState
	}{
		{"no policy", Config{}, RetentionOff},
		{"no policy, replicated", Config{Replication: &ReplicationConfig{Standby: true}}, RetentionOff},
		{"policy, standby", Config{Retention: retention.Policy{MaxAge: 1}, Replication: &ReplicationConfig{Standby: true}}, RetentionNotRunning},
	}
	for _, c := range cases {
		e := &Engine{cfg: c.cfg}
		// a standby starts no retainer (its writer, which starts it, runs from a takeover on)
		got := e.RetentionStatus()
		if got.State != c.want || e.retain != nil || (c.want == RetentionNotRunning) != (got.Reason != "") {
			t.Errorf("%s: %+v (retainer %v)", c.name, got, e.retain != nil)
		}
	}
}
