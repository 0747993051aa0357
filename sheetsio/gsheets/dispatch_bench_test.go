package gsheets

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// byteCounter counts the body bytes of the batchUpdate requests and
// responses it serves.
type byteCounter struct {
	next      http.Handler
	req, resp atomic.Int64
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return w.ResponseWriter.Write(p)
}

func (c *byteCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, ":batchUpdate") {
		c.next.ServeHTTP(w, r)
		return
	}
	c.req.Add(max(r.ContentLength, 0))
	c.next.ServeHTTP(countingWriter{w, &c.resp}, r)
}

// BenchmarkDispatch2000Updates measures one dispatch of 2,000 updates of
// one cell each (rows 2-2001 of one tab): the batchUpdate request and
// response body bytes (the response carries the written rows, C06) and the
// request count (I19: one ranged read and one batchUpdate).
func BenchmarkDispatch2000Updates(b *testing.B) {
	counter := &byteCounter{next: emulator.New(emulator.Options{AutoCreate: true}).Handler()}
	p, w, s := provisionedPart(b, counter)
	const n = 2000
	spec, _ := s.Tab("Part_System")
	ops := make([]sheetsio.Op, n)
	hashes := make([]string, n)
	for i := range ops {
		a := fmt.Sprintf("r%04d", i)
		ops[i] = appendOp("Part_System", a, partValues(a, 1))
		hashes[i], _ = sheetsio.ExpectedRowHash(spec, a, partValues(a, 1))
	}
	if _, err := p.Dispatch(context.Background(), w, sheetsio.Batch{Ops: ops}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var reads, writes int
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		counter.req.Store(0)
		counter.resp.Store(0)
		up := make([]sheetsio.Op, n)
		for i := range up {
			a := fmt.Sprintf("r%04d", i)
			qty := int64(2 + it)
			up[i] = sheetsio.Op{ID: fmt.Sprintf("u%d-%s", it, a), Tab: "Part_System", Kind: sheetsio.OpUpdate, Anchor: a, ExpectedHash: hashes[i],
				Values: map[string]any{"qty": qty}}
			v := partValues(a, qty)
			hashes[i], _ = sheetsio.ExpectedRowHash(spec, a, v)
		}
		b.StartTimer()
		res, err := p.Dispatch(context.Background(), w, sheetsio.Batch{Ops: up})
		if err != nil || res.Ops[n-1].Status != sheetsio.StatusApplied {
			b.Fatalf("dispatch: %v %+v", err, res.Ops[n-1])
		}
		reads, writes = res.Reads, res.Writes
	}
	b.ReportMetric(float64(counter.req.Load()), "req-bytes/op")
	b.ReportMetric(float64(counter.resp.Load()), "resp-bytes/op")
	b.ReportMetric(float64(reads+writes), "requests/op")
}

// provisionedPart serves h over HTTP for b and returns an unpaced
// Provider with the Part schema provisioned through it.
func provisionedPart(b *testing.B, h http.Handler) (*Provider, *sheetsio.Workbook, *layout.Schema) {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	p, err := New(context.Background(), Config{Endpoint: srv.URL, Pacing: Pacing{ReadInterval: -1, WriteInterval: -1},
		Now: func() time.Time { return fixedNow }})
	if err != nil {
		b.Fatal(err)
	}
	s, err := layout.NewSchema(partEntity("Part"))
	if err != nil {
		b.Fatal(err)
	}
	w, err := p.Provision(context.Background(), testSheetID, s)
	if err != nil {
		b.Fatal(err)
	}
	return p, w, s
}
