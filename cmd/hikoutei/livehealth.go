package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/admin"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// Where status took the sync health from (sync_health_source).
const (
	// healthFromRunningStore: the process holding the store answered over
	// its administrative channel (its workers' notes included).
	healthFromRunningStore = "running_store"
	// healthFromReadModel: the read model alone (the store is closed, or
	// the running process did not answer: sync_health_unreachable says why).
	healthFromReadModel = "read_model"
)

// errRunningStoreTimeout: the process holding the store did not answer
// status within liveHealthWait.
var errRunningStoreTimeout = errors.New("running_store_timeout")

// liveHealthWait bounds status's wait for the running process.
const liveHealthWait = 2 * time.Second

// liveSyncHealth asks the process holding store dir for its sync health.
// It returns the targets (sync off: none) or the reason code it could not
// have them: admin_channel_absent when nobody serves the channel (an
// older version, NoAdmin, shutting down), running_store_timeout when it
// did not answer in time, else the answer's code (admin_op_unsupported
// from an older version).
func liveSyncHealth(ctx context.Context, dir string) ([]syncHealthJSON, string) {
	ctx, cancel := context.WithTimeout(ctx, liveHealthWait)
	defer cancel()
	var resp admin.SyncHealthResponse
	err := admin.Call(ctx, dir, admin.OpSyncHealth, nil, &resp)
	if err != nil {
		return nil, unreachableCode(err)
	}
	out := make([]syncHealthJSON, 0, len(resp.Targets))
	for _, w := range resp.Targets {
		h := engine.HealthOfWire(w)
		out = append(out, *syncHealthOf(&h))
	}
	return out, ""
}

// unreachableCode is the stable code of a failed sync.health call.
func unreachableCode(err error) string {
	var re *admin.RemoteError
	switch {
	case errors.Is(err, admin.ErrUnavailable):
		return admin.ErrHeldWithoutChannel.Error()
	case errors.As(err, &re) && re.Code != "":
		return re.Code
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		return errRunningStoreTimeout.Error()
	}
	if code, _, ok := strings.Cut(err.Error(), ":"); ok && isCode(code) {
		return code
	}
	return admin.ErrBadResponse.Error()
}

// isCode reports whether s looks like a stable snake_case code.
func isCode(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz_0123456789") == ""
}

// mergeHealth puts the running store's targets in place of the read
// model's of the same key and keeps the read model's others (targets the
// store synced to earlier).
func mergeHealth(fromModel, live []syncHealthJSON) []syncHealthJSON {
	out := append([]syncHealthJSON{}, live...)
	for _, h := range fromModel {
		if !containsTarget(live, h.Spreadsheet) {
			out = append(out, h)
		}
	}
	return out
}

func containsTarget(list []syncHealthJSON, key string) bool {
	for _, h := range list {
		if h.Spreadsheet == key {
			return true
		}
	}
	return false
}

// addLiveHealth replaces the read model's sync health with the running
// store's when a process holds the store and answers; otherwise it
// records why not.
func (st *storeStatus) addLiveHealth(ctx context.Context) {
	if !st.Running {
		return
	}
	live, code := liveSyncHealth(ctx, st.Dir)
	if code != "" {
		st.SyncHealthUnreachable = code
		return
	}
	st.SyncHealth, st.SyncHealthSource = mergeHealth(st.SyncHealth, live), healthFromRunningStore
	st.addLocalFault(ctx)
}

// addLocalFault asks the running store whether it refuses commits (op
// status: its Health().Local).
func (st *storeStatus) addLocalFault(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, liveHealthWait)
	defer cancel()
	var resp admin.StatusResponse
	if err := admin.Call(ctx, st.Dir, admin.OpStatus, nil, &resp); err != nil {
		return
	}
	if resp.LocalCode != "" {
		st.CommitsRefused, st.CommitsRefusedCode = resp.Local, resp.LocalCode
	}
	st.Retention, st.RetentionDetail, st.RetentionCode = resp.Retention, resp.RetentionDetail, resp.RetentionCode
	st.SegmentsUnreachable, st.SegmentsUnreachableCode = resp.Segments, resp.SegmentsCode
	st.Disk.runningSegments(st.Dir, resp)
}

// printRetention writes the running store's retention line (none when no
// process answered, or an older one that does not tell).
func printRetention(tw io.Writer, st storeStatus) {
	switch {
	case st.Retention == "":
	case st.RetentionDetail != "":
		fmt.Fprintf(tw, "retention\t%s: %s\n", st.Retention, shown(st.RetentionDetail))
	default:
		fmt.Fprintf(tw, "retention\t%s\n", st.Retention)
	}
}

// runningSegments sets where d's segments live to where the running
// store keeps them, when that is not what status measured.
func (d *diskStatus) runningSegments(dir string, resp admin.StatusResponse) {
	abs, err := filepath.Abs(filepath.Join(dir, events.SegmentsDir))
	if d == nil || resp.SegmentsScheme == "" || err != nil || resp.SegmentsAt == abs || resp.SegmentsAt == d.SegmentsDir {
		return
	}
	d.SegmentsScheme, d.SegmentsDir = resp.SegmentsScheme, resp.SegmentsAt
	d.Segments, d.SegmentBytes = 0, 0
	d.SegmentsNote = "count unknown while a process holds the store (its /metrics count them)"
}

// printHealthSource says where the sync health below comes from when
// that is not the running store's own view.
func printHealthSource(out io.Writer, st storeStatus) {
	switch {
	case st.SyncHealthUnreachable != "":
		fmt.Fprintf(out, "\nsync health: from the read model only; the running process did not answer (%s), so divergence and provider failures are not shown\n",
			st.SyncHealthUnreachable)
	case st.SyncHealthSource == healthFromRunningStore && len(st.SyncHealth) == 0:
		fmt.Fprintln(out, "\nsync health: the running store syncs no spreadsheet")
	case st.SyncHealthSource == healthFromReadModel && len(st.SyncHealth) == 0:
		fmt.Fprintln(out, "\nsync health: no sync target in the read model (no process holds the store)")
	case st.SyncHealthSource == healthFromReadModel:
		fmt.Fprintln(out, "\nsync health: from the read model (no process holds the store): only tabs with waiting or failed effects; divergence and provider failures are known to a running store only")
	}
}
