package hikoutei_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/fixtures"
)

func BenchmarkTmpDump(b *testing.B) {
	dir := b.TempDir()
	syncAirports(b, dir, fixtures.Airports(b)[:3])
	l, err := events.OpenLog(filepath.Join(dir, "log.db"), events.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	l.ReadFrom(1, func(e events.Event) error {
		m, _ := events.EncodePayload(e.Payload)
		fmt.Printf("%d %s %s v%d tok=%q commit=%q %v\n", e.Seq, e.Type(), e.Stream, e.Version, e.Token, e.Commit, m)
		return nil
	})
}
