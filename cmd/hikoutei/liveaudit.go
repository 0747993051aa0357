package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/admin"
)

// checkAuditSources checks that audit got exactly one source: --dir, a
// mirror (--nats --stream) or a replicated stream (--store, with --nats
// or HIKOUTEI_NATS_URL).
func checkAuditSources(dir string, mirror mirrorSource, repl *replicatedSource) error {
	if repl.store == "" {
		if dir == "" && (mirror.url == "" || mirror.stream == "") {
			return usageError{errors.New("give --dir, --nats and --stream, or --nats and --store")}
		}
		if dir != "" {
			return requireStore(dir)
		}
		return nil
	}
	if dir != "" || mirror.stream != "" || mirror.key != "" {
		return usageError{errors.New("--store excludes --dir, --stream and --mirror-key")}
	}
	repl.url, repl.nkey = mirror.url, mirror.nkey
	return repl.resolve()
}

// auditStore audits dir's log; while a process holds the store it audits
// a copy that process writes through its administrative channel.
func auditStore(ctx context.Context, stderr io.Writer, dir string, f *auditFilter, fn func(events.Event) error) error {
	err := auditEvents(dir, f, fn)
	if !errors.Is(err, events.ErrStoreLocked) {
		return err
	}
	if f.pv.reveal {
		return errRevealRunning(dir)
	}
	return auditRunningCopy(ctx, stderr, dir, err, f, fn)
}

// auditRunningCopy audits a copy of a running store's log written by the
// running process into a private temporary directory. locked is the
// error reported when nobody serves the channel.
func auditRunningCopy(ctx context.Context, stderr io.Writer, dir string, locked error, f *auditFilter, fn func(events.Event) error) error {
	scratch, err := scratchDir("", "hikoutei-audit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	var resp admin.BackupResponse
	handled, err := viaChannel(ctx, dir, admin.OpStoreBackup, admin.BackupRequest{Out: filepath.Join(scratch, events.LogFileName)}, &resp)
	switch {
	case !handled:
		return locked
	case err != nil:
		return fmt.Errorf("the store is running and its copy failed: %w", err)
	}
	fmt.Fprintf(stderr, "audit: the store is running: audited a copy of its log at head %d\n", resp.Head)
	return auditEventsThen(scratch, f, func() { os.RemoveAll(scratch) }, fn)
}

// auditReplicated reads the store's replicated log stream into a
// temporary log and audits it.
func auditReplicated(ctx context.Context, stderr io.Writer, src replicatedSource, f *auditFilter, fn func(events.Event) error) error {
	scratch, err := scratchDir("", "hikoutei-audit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	head, err := src.catchUpInto(ctx, filepath.Join(scratch, events.LogFileName))
	if err != nil {
		return fmt.Errorf("read the stream of store %q: %w", src.store, err)
	}
	fmt.Fprintf(stderr, "audit: read the replicated stream of store %s up to log head %d\n", src.store, head)
	return auditEventsThen(scratch, f, func() { os.RemoveAll(scratch) }, fn)
}

// checkPersonalFlags checks --reveal-personal and --erasures against the
// other flags (usage errors, exit 2).
func checkPersonalFlags(dir string, mirror mirrorSource, repl replicatedSource, f *auditFilter) error {
	switch {
	case f.pv.reveal && (dir == "" || mirror.url != "" || repl.store != ""):
		return usageError{errors.New("--reveal-personal opens the values with the store's keys.db: give --dir (not --nats or --store)")}
	case f.erasures && f.entity != "":
		return usageError{errors.New("--erasures excludes --entity")}
	}
	return nil
}
