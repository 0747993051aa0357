package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// apiFailure is an error response: the error, optional google.rpc details
// and an optional Retry-After (seconds).
type apiFailure struct {
	err        *Error
	details    []any
	retryAfter int
}

// route is a parsed API request path.
type route struct {
	op    string // e.g. "values.get", "spreadsheets.batchUpdate"
	id    string // spreadsheet id ("" for create)
	rng   string // unescaped range or metadata id
	write bool
}

// call is what an endpoint handler receives.
type call struct {
	route
	query url.Values
	body  []byte
	ctx   context.Context
}

// result is what an endpoint handler returns: the JSON body and the number
// of cells the request wrote (for latency).
type result struct {
	body  any
	cells int
}

// Handler returns the HTTP handler serving the Sheets API under /v4/ and
// the read-only HTML view under / and /view/.
func (e *Emulator) Handler() http.Handler { return http.HandlerFunc(e.serveHTTP) }

func (e *Emulator) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if fl := e.guard(r); fl != nil {
		writeFailure(w, fl)
		return
	}
	if r.Method == http.MethodGet && (r.URL.Path == "/" || strings.HasPrefix(r.URL.Path, "/view/")) {
		e.serveView(w, r)
		return
	}
	rt, err := parseRoute(r.Method, r.URL.EscapedPath())
	if err != nil {
		writeFailure(w, &apiFailure{err: asAPIError(err)})
		return
	}
	body, fl := e.readBody(r)
	if fl != nil {
		writeFailure(w, fl)
		return
	}
	if rt.id != "" {
		e.count(rt.id, rt.write)
	}
	if fl := e.admitCaller(rt.id, callerOf(r), rt.write); fl != nil {
		writeFailure(w, fl)
		return
	}
	e.serveAPI(w, r, call{route: rt, query: r.URL.Query(), body: body, ctx: r.Context()})
}

func (e *Emulator) readBody(r *http.Request) ([]byte, *apiFailure) {
	limit := e.opts.MaxRequestBytes
	if limit > 0 && r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	reader := io.Reader(r.Body)
	if limit > 0 {
		reader = io.LimitReader(r.Body, limit+1)
	}
	body, err := io.ReadAll(reader)
	if err != nil {
		return nil, &apiFailure{err: errorf(ErrInvalidArgument, "could not read request body")}
	}
	if limit > 0 && int64(len(body)) > limit {
		return nil, tooLarge(limit)
	}
	return body, nil
}

func tooLarge(limit int64) *apiFailure {
	return &apiFailure{err: errorf(ErrPayloadTooLarge, "Request payload size exceeds the limit: %d bytes.", limit)}
}

// serveAPI runs faults, quota, the endpoint and latency for one request.
func (e *Emulator) serveAPI(w http.ResponseWriter, r *http.Request, c call) {
	f := e.nextFault(c.write)
	if f != nil && !f.appliesFirst() && !e.preFault(w, r, f, c.write) {
		return
	}
	if fl := e.admitQuota(r, c.write); fl != nil {
		writeFailure(w, fl)
		return
	}
	res, err := e.dispatch(c)
	if err == nil {
		e.delay(r.Context(), res.cells)
	}
	if f != nil && f.appliesFirst() && !e.postFault(w, r, f) {
		return
	}
	if err != nil {
		writeFailure(w, &apiFailure{err: asAPIError(err)})
		return
	}
	writeJSON(w, http.StatusOK, res.body)
}

// preFault handles a fault that strikes before the request runs. It
// returns true when the request should still run (a released hang).
func (e *Emulator) preFault(w http.ResponseWriter, r *http.Request, f *Fault, write bool) bool {
	switch f.Kind {
	case FaultHang:
		return f.hang(r.Context())
	case FaultInterleave:
		if f.Interleave != nil {
			f.Interleave()
		}
		return true
	case FaultDrop:
		dropConnection(w)
	case FaultHTML502:
		writeHTML502(w)
	default:
		writeFailure(w, f.failure(write))
	}
	return false
}

// postFault handles a fault that strikes after the request ran. It returns
// true when the normal response should still be written.
func (e *Emulator) postFault(w http.ResponseWriter, r *http.Request, f *Fault) bool {
	switch f.Kind {
	case FaultApplyThenDrop:
		dropConnection(w)
	case FaultApplyThenHang:
		return f.hang(r.Context())
	default:
		writeFailure(w, f.failure(true))
	}
	return false
}

func (e *Emulator) admitQuota(r *http.Request, write bool) *apiFailure {
	if e.quota == nil {
		return nil
	}
	user := r.URL.Query().Get("quotaUser")
	if user == "" {
		user = "caller/" + callerOf(r)
	}
	if user == "caller/" {
		user = "default"
	}
	e.ctl.Lock()
	d := e.quota.admit(user, write, e.clock.Now())
	e.ctl.Unlock()
	if d == nil {
		return nil
	}
	return quotaError(d)
}

// delay applies the latency model.
func (e *Emulator) delay(ctx context.Context, cells int) {
	d := e.opts.Latency.PerRequest + time.Duration(cells)*e.opts.Latency.PerCellWritten
	if d <= 0 {
		return
	}
	if e.opts.Sleep != nil {
		e.opts.Sleep(ctx, d)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":500,"message":"encoding failed","status":"INTERNAL"}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeFailure writes Google's error body:
// {"error":{"code","message","status","errors":[{message,domain,reason}],"details"?}}.
func writeFailure(w http.ResponseWriter, f *apiFailure) {
	e := f.err
	inner := map[string]any{
		"code":    e.HTTPStatus,
		"message": e.Message,
		"status":  e.Status,
	}
	// gax's apierror parses details with strict protojson, which rejects the
	// legacy "errors" list; Google's bodies that carry details omit it too.
	if len(f.details) > 0 {
		inner["details"] = f.details
	} else {
		inner["errors"] = []any{map[string]any{"message": e.Message, "domain": "global", "reason": e.Reason}}
	}
	if f.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(f.retryAfter))
	}
	writeJSON(w, e.HTTPStatus, map[string]any{"error": inner})
}

// splitVerb splits "name:verb" at the last literal ':' of an escaped segment.
func splitVerb(seg string) (string, string) {
	i := strings.LastIndexByte(seg, ':')
	if i < 0 {
		return seg, ""
	}
	return seg[:i], seg[i+1:]
}

// parseRoute maps method + escaped path to an endpoint.
func parseRoute(method, escaped string) (route, error) {
	const prefix = "/v4/spreadsheets"
	if !strings.HasPrefix(escaped, prefix) {
		return route{}, errorf(ErrNotFound, "Requested entity was not found.")
	}
	rest := strings.TrimPrefix(escaped, prefix)
	if rest == "" {
		return methodRoute(method, http.MethodPost, route{op: "spreadsheets.create", write: true})
	}
	segs := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	idSeg, verb := splitVerb(segs[0])
	id, err := url.PathUnescape(idSeg)
	if err != nil || id == "" {
		return route{}, errorf(ErrNotFound, "Requested entity was not found.")
	}
	if len(segs) == 1 {
		return bookRoute(method, id, verb)
	}
	return subRoute(method, id, segs[1:])
}

func methodRoute(got, want string, rt route) (route, error) {
	if got != want {
		return route{}, errorf(ErrNotFound, "Method not found.")
	}
	return rt, nil
}

func bookRoute(method, id, verb string) (route, error) {
	switch verb {
	case "":
		return methodRoute(method, http.MethodGet, route{op: "spreadsheets.get", id: id})
	case "batchUpdate":
		return methodRoute(method, http.MethodPost, route{op: "spreadsheets.batchUpdate", id: id, write: true})
	case "getByDataFilter":
		return methodRoute(method, http.MethodPost, route{op: "spreadsheets.getByDataFilter", id: id})
	}
	return route{}, errorf(ErrUnknownRequest, "The emulator does not implement spreadsheets:%s.", verb)
}

func subRoute(method, id string, segs []string) (route, error) {
	coll, verb := splitVerb(segs[0])
	switch {
	case coll == "values" && len(segs) == 1:
		return valuesCollectionRoute(method, id, verb)
	case coll == "values" && len(segs) == 2 && verb == "":
		return valuesRangeRoute(method, id, segs[1])
	case coll == "developerMetadata" && len(segs) == 1 && verb == "search":
		return methodRoute(method, http.MethodPost, route{op: "developerMetadata.search", id: id})
	case coll == "sheets" && len(segs) == 2 && verb == "":
		sid, v := splitVerb(segs[1])
		if v == "copyTo" {
			return methodRoute(method, http.MethodPost, route{op: "sheets.copyTo", id: id, rng: sid, write: true})
		}
	case coll == "developerMetadata" && len(segs) == 2 && verb == "":
		mid, _ := url.PathUnescape(segs[1])
		return methodRoute(method, http.MethodGet, route{op: "developerMetadata.get", id: id, rng: mid})
	}
	return route{}, errorf(ErrUnknownRequest, "The emulator does not implement this endpoint.")
}

func valuesCollectionRoute(method, id, verb string) (route, error) {
	switch verb {
	case "batchGet":
		return methodRoute(method, http.MethodGet, route{op: "values.batchGet", id: id})
	case "batchUpdate":
		return methodRoute(method, http.MethodPost, route{op: "values.batchUpdate", id: id, write: true})
	case "batchClear":
		return methodRoute(method, http.MethodPost, route{op: "values.batchClear", id: id, write: true})
	case "batchGetByDataFilter":
		return methodRoute(method, http.MethodPost, route{op: "values.batchGetByDataFilter", id: id})
	case "batchUpdateByDataFilter":
		return methodRoute(method, http.MethodPost, route{op: "values.batchUpdateByDataFilter", id: id, write: true})
	case "batchClearByDataFilter":
		return methodRoute(method, http.MethodPost, route{op: "values.batchClearByDataFilter", id: id, write: true})
	}
	return route{}, errorf(ErrUnknownRequest, "The emulator does not implement values:%s.", verb)
}

func valuesRangeRoute(method, id, seg string) (route, error) {
	rangeSeg, verb := splitVerb(seg)
	if verb != "append" && verb != "clear" {
		rangeSeg, verb = seg, ""
	}
	rng, err := url.PathUnescape(rangeSeg)
	if err != nil {
		return route{}, errorf(ErrRangeParse, "Unable to parse range: %s", rangeSeg)
	}
	rt := route{id: id, rng: rng, write: true}
	switch {
	case verb == "append":
		rt.op = "values.append"
		return methodRoute(method, http.MethodPost, rt)
	case verb == "clear":
		rt.op = "values.clear"
		return methodRoute(method, http.MethodPost, rt)
	case method == http.MethodPut:
		rt.op = "values.update"
		return rt, nil
	}
	rt.op, rt.write = "values.get", false
	return methodRoute(method, http.MethodGet, rt)
}

// dispatch runs the endpoint for c.
func (e *Emulator) dispatch(c call) (result, error) {
	switch c.op {
	case "spreadsheets.create":
		return e.apiCreate(c)
	case "spreadsheets.get":
		return e.apiGet(c)
	case "spreadsheets.batchUpdate":
		return e.apiBatchUpdate(c)
	case "developerMetadata.search":
		return e.apiMetaSearch(c)
	case "developerMetadata.get":
		return e.apiMetaGet(c)
	case "sheets.copyTo":
		return e.apiCopyTo(c)
	case "spreadsheets.getByDataFilter":
		return e.apiGetByDataFilter(c)
	}
	return e.dispatchValues(c)
}

// decodeBody decodes a JSON request body with numbers kept exact.
func decodeBody(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return errorf(ErrInvalidArgument, "Invalid JSON payload received. %s", err.Error())
	}
	return nil
}
