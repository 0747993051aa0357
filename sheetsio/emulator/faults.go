package emulator

import (
	"context"
	"net/http"
	"time"
)

// FaultKind names an injected failure.
type FaultKind string

// Fault kinds. "Apply" kinds run the request (its write lands) before
// failing, like Google answering 503 after committing.
const (
	// Fault429 answers 429 RESOURCE_EXHAUSTED with Google's quota body and Retry-After.
	Fault429 FaultKind = "429"
	// Fault500 answers 500 INTERNAL ("Internal error encountered." unless Message is set).
	Fault500 FaultKind = "500"
	// Fault503 answers 503 UNAVAILABLE without applying the request.
	Fault503 FaultKind = "503"
	// FaultApplyThen503 applies the request, then answers 503 UNAVAILABLE.
	FaultApplyThen503 FaultKind = "apply_then_503"
	// FaultApplyThenDrop applies the request, then closes the connection without a response.
	FaultApplyThenDrop FaultKind = "apply_then_drop"
	// FaultApplyThenHang applies the request, then blocks until the client gives up
	// (request context done) or Release is closed (then answers normally).
	FaultApplyThenHang FaultKind = "apply_then_hang"
	// FaultHang blocks before applying until the request context is done (nothing
	// applied) or Release is closed (then the request runs normally).
	FaultHang FaultKind = "hang"
	// FaultDrop closes the connection without applying the request.
	FaultDrop FaultKind = "drop"
	// FaultHTML502 answers 502 with Google's HTML error page (text/html).
	FaultHTML502 FaultKind = "html_502"
	// FaultInterleave runs Fault.Interleave (e.g. a Person's edit) after
	// the request arrived and before it is applied, then serves the request
	// normally: a deterministic race between a person and the request.
	FaultInterleave FaultKind = "interleave"
)

// Match filters which requests a fault applies to.
type Match string

// Match values: any request, reads only, writes only.
const (
	MatchAny    Match = ""
	MatchReads  Match = "reads"
	MatchWrites Match = "writes"
)

// Fault is one scripted failure. Message overrides the error message
// (e.g. a 500 whose message says "Quota exceeded"); RetryAfter sets the
// Retry-After header of a 429 (default 60 s); Release ends a hang;
// Interleave is what FaultInterleave runs (it may call Person methods).
type Fault struct {
	Kind       FaultKind
	Match      Match
	Message    string
	RetryAfter time.Duration
	Release    <-chan struct{}
	Interleave func()
}

// FaultRates are per-request probabilities (0..1) for a seeded random fault
// campaign over requests matching Match. Checked in field order.
// RetryAfter is the Retry-After header of its 429s (default 60 s, the
// per-minute quota's window; at least a second): a campaign that runs
// on a compressed time scale shortens it, since a client honouring it
// waits that long.
type FaultRates struct {
	Match          Match
	P429           float64
	P500           float64
	P503           float64
	PApplyThen503  float64
	PApplyThenDrop float64
	PHTML502       float64
	RetryAfter     time.Duration
}

// ScriptFaults queues faults for the next matching requests, in order: each
// API request takes the first queued fault whose Match accepts it.
func (e *Emulator) ScriptFaults(f ...Fault) {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	e.script = append(e.script, f...)
}

// ClearFaults drops queued faults and disables random faults.
func (e *Emulator) ClearFaults() {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	e.script, e.rates = nil, FaultRates{}
}

// PendingFaults is the number of scripted faults not yet consumed.
func (e *Emulator) PendingFaults() int {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	return len(e.script)
}

// SetFaultRates starts a random fault campaign driven by Options.Seed.
func (e *Emulator) SetFaultRates(r FaultRates) {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	e.rates = r
}

func (m Match) accepts(write bool) bool {
	return m == MatchAny || (m == MatchWrites) == write
}

// nextFault takes the fault for a request, scripted first, then random.
func (e *Emulator) nextFault(write bool) *Fault {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	for i, f := range e.script {
		if f.Match.accepts(write) {
			e.script = append(e.script[:i:i], e.script[i+1:]...)
			return &f
		}
	}
	if !e.rates.Match.accepts(write) {
		return nil
	}
	x := e.rng.Float64()
	r := e.rates
	for _, c := range []struct {
		p float64
		k FaultKind
	}{{r.P429, Fault429}, {r.P500, Fault500}, {r.P503, Fault503}, {r.PApplyThen503, FaultApplyThen503}, {r.PApplyThenDrop, FaultApplyThenDrop}, {r.PHTML502, FaultHTML502}} {
		if x < c.p {
			return &Fault{Kind: c.k, RetryAfter: r.RetryAfter}
		}
		x -= c.p
	}
	return nil
}

func (f *Fault) appliesFirst() bool {
	return f.Kind == FaultApplyThen503 || f.Kind == FaultApplyThenDrop || f.Kind == FaultApplyThenHang
}

// failure returns the error response of a non-hang, non-drop fault.
func (f *Fault) failure(write bool) *apiFailure {
	switch f.Kind {
	case Fault429:
		fl := quotaError(&quotaDenial{write: write, perUser: true, limit: 60, retryAfter: time.Minute})
		if f.RetryAfter > 0 {
			fl.retryAfter = max(int(f.RetryAfter/time.Second), 1)
		}
		return f.withMessage(fl)
	case Fault500:
		return f.withMessage(&apiFailure{err: &Error{Code: ErrInjected.Code, HTTPStatus: 500, Status: "INTERNAL", Reason: "backendError", Message: "Internal error encountered."}})
	}
	return f.withMessage(&apiFailure{err: errorf(ErrInjected, "The service is currently unavailable.")})
}

func (f *Fault) withMessage(fl *apiFailure) *apiFailure {
	if f.Message != "" {
		e := *fl.err
		e.Message = f.Message
		fl.err = &e
	}
	return fl
}

// hang blocks until the request is abandoned (false) or released (true).
func (f *Fault) hang(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-f.Release:
		return true
	}
}

// dropConnection closes the client connection without a response.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

const html502 = `<!DOCTYPE html>
<html lang=en>
  <meta charset=utf-8>
  <meta name=viewport content="initial-scale=1, minimum-scale=1, width=device-width">
  <title>Error 502 (Server Error)!!1</title>
  <p><b>502.</b> <ins>That’s an error.</ins>
  <p>The server encountered a temporary error and could not complete your request.<p>Please try again in 30 seconds.  <ins>That’s all we know.</ins>
`

func writeHTML502(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.WriteHeader(http.StatusBadGateway)
	_, _ = w.Write([]byte(html502))
}
