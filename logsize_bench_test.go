package hikoutei_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/fixtures"
)

// logSizeUnit is how many airports one commit persists (as the demo does).
const logSizeUnit = 500

// BenchmarkLogBytesPerSyncedRow: the size of log.db per synced row (the
// 7,184 OpenFlights airports), a row
// created and applied to its two tabs (System and Input). Goal: log-B/row
// ≤ 1,600 (issue 30; bench row 8). Run with
//
//	go test -run '^$' -bench BenchmarkLogBytesPerSyncedRow -benchtime 1x -count 3 .
//
// and -v to log where the bytes go (by event type, by bucket, page fill).
func BenchmarkLogBytesPerSyncedRow(b *testing.B) {
	all := fixtures.Airports(b) // 7,184 rows, as the demo syncs
	var m logSize
	for range b.N {
		dir := b.TempDir()
		syncAirports(b, dir, all)
		m = measureLog(b, filepath.Join(dir, "log.db"))
	}
	rows := float64(len(all))
	b.ReportMetric(float64(m.file)/rows, "log-B/row")
	b.ReportMetric(float64(m.file)/float64(m.records), "file/records")
	b.ReportMetric(float64(m.events)/rows, "events/row")
	b.Log(m.breakdown(len(all)))
}

// syncAirports commits rows into a new store at dir, drains its outbox to
// an emulated sheet and closes the store.
func syncAirports(b *testing.B, dir string, rows []fixtures.Airport) {
	b.Helper()
	ctx := context.Background()
	sheet := hikouteitest.NewSheet(b)
	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Logger: slog.New(slog.DiscardHandler), Sync: sheet.SyncOptions()},
		hikoutei.Entity[fixtures.Airport]("Airport"))
	if err != nil {
		b.Fatal(err)
	}
	h := hikouteitest.New(b, s)
	for i := 0; i < len(rows); i += logSizeUnit {
		u := s.Begin()
		for j := i; j < min(i+logSizeUnit, len(rows)); j++ {
			if err := u.Persist(&rows[j]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := u.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	h.Drain(ctx)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
}

// logSize is where a log file's bytes go.
type logSize struct {
	file, records, events int64
	byType                map[string]*typeSize
	buckets               map[string]bolt.BucketStats
	pages                 map[string]int // pages below the high-water mark by kind: meta, freelist, free, branch, leaf
	pageSize              int
	highWater             int64 // bytes below bbolt's high-water mark
}

// typeSize sums the records of one event type.
type typeSize struct {
	n, record, payload, stream, commit int64
}

// measureLog reads the closed log file at path with bbolt directly.
func measureLog(b *testing.B, path string) logSize {
	b.Helper()
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	// PreLoadFreelist: a read-only bbolt does not read its freelist
	// otherwise, and would count no free page.
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, PreLoadFreelist: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	m := logSize{file: st.Size(), byType: map[string]*typeSize{}, buckets: map[string]bolt.BucketStats{}, pageSize: db.Info().PageSize}
	err = db.View(func(tx *bolt.Tx) error {
		m.highWater = tx.Size()
		var err error
		if m.pages, err = pageKinds(tx); err != nil {
			return err
		}
		err = tx.ForEach(func(name []byte, bk *bolt.Bucket) error {
			m.buckets[string(name)] = bk.Stats()
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket([]byte("events")).ForEach(func(k, v []byte) error { return m.addRecord(k, v) })
	})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// pageKinds counts the pages below tx's high-water mark by kind (a
// page's overflow pages count as its kind).
func pageKinds(tx *bolt.Tx) (map[string]int, error) {
	kinds := map[string]int{}
	for id := 0; ; {
		p, err := tx.Page(id)
		if err != nil || p == nil {
			return kinds, err
		}
		n := 1
		if p.Type != "free" {
			n += p.OverflowCount
		}
		kinds[p.Type] += n
		id += n
	}
}

// addRecord counts one stored record under its event type.
func (m *logSize) addRecord(k, v []byte) error {
	e, err := events.DecodeRecord(binary.BigEndian.Uint64(k), v)
	if err != nil {
		return err
	}
	p, err := events.EncodePayload(e.Payload)
	if err != nil {
		return err
	}
	payload, err := events.AppendCanonical(nil, p)
	if err != nil {
		return err
	}
	t := m.byType[string(e.Type())]
	if t == nil {
		t = &typeSize{}
		m.byType[string(e.Type())] = t
	}
	t.n++
	t.record += int64(len(v))
	t.payload += int64(len(payload))
	t.stream += int64(len(e.Stream))
	t.commit += int64(len(e.Commit) + len(e.Token))
	m.records += int64(len(v))
	m.events++
	return nil
}

// breakdown is a table of where the bytes go, per synced row.
func (m logSize) breakdown(rows int) string {
	var sb strings.Builder
	per := func(n int64) string { return strconv.FormatFloat(float64(n)/float64(rows), 'f', 1, 64) }
	page := func(kind string) string { return per(int64(m.pages[kind] * m.pageSize)) }
	fmt.Fprintf(&sb, "log.db %d B = %s B/row: below the high-water mark %s B/row (leaf %s, branch %s, free %s, freelist %s, meta %s), grown past it %s; records %s B/row; pages of %d B\n",
		m.file, per(m.file), per(m.highWater), page("leaf"), page("branch"), page("free"), page("freelist"), page("meta"),
		per(m.file-m.highWater), per(m.records), m.pageSize)
	types := make([]string, 0, len(m.byType))
	for t := range m.byType {
		types = append(types, t)
	}
	sort.Strings(types)
	fmt.Fprintf(&sb, "%-28s %8s %10s %10s %10s %10s\n", "type", "ev/row", "record/row", "payload", "stream", "token+commit")
	for _, t := range types {
		s := m.byType[t]
		fmt.Fprintf(&sb, "%-28s %8s %10s %10s %10s %10s\n", t, per(s.n), per(s.record), per(s.payload), per(s.stream), per(s.commit))
	}
	names := make([]string, 0, len(m.buckets))
	for n := range m.buckets {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(&sb, "%-17s %8s %14s %14s %12s %12s %6s\n", "bucket", "keys", "leaf+overflow", "branch+ovfl", "alloc/row", "inuse/row", "fill")
	for _, n := range names {
		s := m.buckets[n]
		alloc, inuse := int64(s.BranchAlloc+s.LeafAlloc), int64(s.BranchInuse+s.LeafInuse)
		fill := 0.0
		if alloc > 0 {
			fill = float64(inuse) / float64(alloc)
		}
		fmt.Fprintf(&sb, "%-17s %8d %14s %14s %12s %12s %6.2f\n", n, s.KeyN, fmt.Sprintf("%d+%d", s.LeafPageN, s.LeafOverflowN),
			fmt.Sprintf("%d+%d", s.BranchPageN, s.BranchOverflowN), per(alloc), per(inuse), fill)
	}
	return sb.String()
}
