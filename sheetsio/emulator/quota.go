package emulator

import (
	"fmt"
	"math"
	"time"
)

// Quota is Google's request quota model: a sliding window (Window, default
// one minute) with separate limits for reads and writes, per user and per
// project. A zero limit disables that limit. The user is the request's
// `quotaUser` query parameter (Google's standard system parameter), else
// its caller (the bearer token of its Authorization header: a service
// account, see Caller), else "default". Exceeding a limit answers 429 RESOURCE_EXHAUSTED with Google's
// message, ErrorInfo reason RATE_LIMIT_EXCEEDED and a Retry-After header.
type Quota struct {
	ReadsPerUser     int
	WritesPerUser    int
	ReadsPerProject  int
	WritesPerProject int
	Window           time.Duration
}

// GoogleMaxRequestBytes is the largest request body Google accepts
// (10 MiB); a larger one is answered 400 INVALID_ARGUMENT "Request payload
// size exceeds the limit: 10485760 bytes." (Options.MaxRequestBytes).
const GoogleMaxRequestBytes = 10 << 20

// GoogleModel returns o with Google's latency (GoogleLatency), quotas
// (GoogleQuota) and request size limit (GoogleMaxRequestBytes).
func GoogleModel(o Options) Options {
	o.Latency, o.Quota, o.MaxRequestBytes = GoogleLatency(), GoogleQuota(), GoogleMaxRequestBytes
	return o
}

// GoogleQuota returns Google's published limits: 60 reads and 60 writes per
// minute per user, 300 each per minute per project.
func GoogleQuota() *Quota {
	return &Quota{ReadsPerUser: 60, WritesPerUser: 60, ReadsPerProject: 300, WritesPerProject: 300, Window: time.Minute}
}

// quotaState keeps the timestamps of admitted requests per bucket.
type quotaState struct {
	q        Quota
	buckets  map[string][]time.Time
	admitted uint64
}

func newQuotaState(q Quota) *quotaState {
	if q.Window <= 0 {
		q.Window = time.Minute
	}
	return &quotaState{q: q, buckets: map[string][]time.Time{}}
}

// quotaDenial describes which limit a request hit.
type quotaDenial struct {
	write      bool
	perUser    bool
	limit      int
	retryAfter time.Duration
}

// admit records a request at now, or returns the limit it would exceed.
func (qs *quotaState) admit(user string, write bool, now time.Time) *quotaDenial {
	kind := "read"
	userLimit, projLimit := qs.q.ReadsPerUser, qs.q.ReadsPerProject
	if write {
		kind = "write"
		userLimit, projLimit = qs.q.WritesPerUser, qs.q.WritesPerProject
	}
	userKey, projKey := kind+"/user/"+user, kind+"/project"
	if d := qs.check(userKey, userLimit, now); d > 0 {
		return &quotaDenial{write: write, perUser: true, limit: userLimit, retryAfter: d}
	}
	if d := qs.check(projKey, projLimit, now); d > 0 {
		return &quotaDenial{write: write, limit: projLimit, retryAfter: d}
	}
	qs.buckets[userKey] = append(qs.buckets[userKey], now)
	qs.buckets[projKey] = append(qs.buckets[projKey], now)
	if qs.admitted++; qs.admitted%1024 == 0 {
		for key := range qs.buckets { // sweep users seen once and never again
			qs.check(key, 1, now)
		}
	}
	return nil
}

// check prunes the bucket and returns how long until a slot frees up when
// it is full (0 when the request fits).
func (qs *quotaState) check(key string, limit int, now time.Time) time.Duration {
	if limit <= 0 {
		return 0
	}
	ts := qs.buckets[key]
	cut := 0
	for cut < len(ts) && !ts[cut].After(now.Add(-qs.q.Window)) {
		cut++
	}
	ts = ts[cut:]
	if len(ts) == 0 {
		// Forget idle users: quotaUser is client-chosen, so keeping empty
		// buckets would grow without bound.
		delete(qs.buckets, key)
	} else {
		qs.buckets[key] = ts
	}
	if len(ts) < limit {
		return 0
	}
	return ts[0].Add(qs.q.Window).Sub(now)
}

// quotaError builds Google's 429 body for a denial.
func quotaError(d *quotaDenial) *apiFailure {
	metric, limitName, quotaLimit := "Read requests", "Read requests per minute", "ReadRequestsPerMinute"
	if d.write {
		metric, limitName, quotaLimit = "Write requests", "Write requests per minute", "WriteRequestsPerMinute"
	}
	if d.perUser {
		limitName += " per user"
		quotaLimit += "PerUser"
	}
	msg := fmt.Sprintf("Quota exceeded for quota metric '%s' and limit '%s' of service 'sheets.googleapis.com' for consumer 'project_number:000000000000'.", metric, limitName)
	e := errorf(ErrQuotaExceeded, "%s", msg)
	details := []any{map[string]any{
		"@type":  "type.googleapis.com/google.rpc.ErrorInfo",
		"reason": "RATE_LIMIT_EXCEEDED",
		"domain": "googleapis.com",
		"metadata": map[string]string{
			"quota_metric":      "sheets.googleapis.com/" + map[bool]string{true: "write_requests", false: "read_requests"}[d.write],
			"quota_limit":       quotaLimit,
			"quota_limit_value": fmt.Sprint(d.limit),
			"service":           "sheets.googleapis.com",
			"consumer":          "projects/000000000000",
		},
	}}
	secs := int(math.Ceil(d.retryAfter.Seconds()))
	return &apiFailure{err: e, details: details, retryAfter: max(secs, 1)}
}
