package hikoutei_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// rootSentinels are the package's sentinel errors by name; the test below
// checks the list is every Err variable errors.go declares.
var rootSentinels = map[string]error{
	"ErrInvalidEntity": hikoutei.ErrInvalidEntity, "ErrUnregisteredType": hikoutei.ErrUnregisteredType,
	"ErrInvalidPrimaryKey": hikoutei.ErrInvalidPrimaryKey, "ErrPrimaryKeyChanged": hikoutei.ErrPrimaryKeyChanged,
	"ErrUnknownField": hikoutei.ErrUnknownField, "ErrInvalidQuery": hikoutei.ErrInvalidQuery,
	"ErrInvalidValue": hikoutei.ErrInvalidValue, "ErrNotFound": hikoutei.ErrNotFound, "ErrNonUnique": hikoutei.ErrNonUnique,
	"ErrUnitDone": hikoutei.ErrUnitDone, "ErrStoreClosed": hikoutei.ErrStoreClosed,
	"ErrPersonalPrimaryKey": hikoutei.ErrPersonalPrimaryKey, "ErrPersonalKeysLost": hikoutei.ErrPersonalKeysLost,
	"ErrPersonalKeyFile": hikoutei.ErrPersonalKeyFile, "ErrSealedValueMalformed": hikoutei.ErrSealedValueMalformed,
	"ErrReadModelBehind": hikoutei.ErrReadModelBehind, "ErrReadModelUnavailable": hikoutei.ErrReadModelUnavailable,
	"ErrLogWrite": hikoutei.ErrLogWrite, "ErrLogCommitUncertain": hikoutei.ErrLogCommitUncertain,
	"ErrLogBehindReadModel": hikoutei.ErrLogBehindReadModel, "ErrReadModelCorrupt": hikoutei.ErrReadModelCorrupt,
	"ErrStoreLocked": hikoutei.ErrStoreLocked, "ErrLeaseExpired": hikoutei.ErrLeaseExpired,
	"ErrLeaseFileInvalid": hikoutei.ErrLeaseFileInvalid, "ErrLogCorrupt": hikoutei.ErrLogCorrupt,
	"ErrLogRecordCorrupt": hikoutei.ErrLogRecordCorrupt, "ErrEventTypeUnknown": hikoutei.ErrEventTypeUnknown,
	"ErrSegmentMissing": hikoutei.ErrSegmentMissing, "ErrSegmentDamaged": hikoutei.ErrSegmentDamaged,
	"ErrSegmentStoreUnavailable": hikoutei.ErrSegmentStoreUnavailable,
	"ErrInvalidSegmentsURL":      hikoutei.ErrInvalidSegmentsURL,
	"ErrSealRefused":             hikoutei.ErrSealRefused, "ErrRetentionFailing": hikoutei.ErrRetentionFailing, "ErrDiskFilling": hikoutei.ErrDiskFilling, "ErrDiskFull": hikoutei.ErrDiskFull,
	"ErrReadModelSetAside": hikoutei.ErrReadModelSetAside,
	"ErrChainBroken":       hikoutei.ErrChainBroken, "ErrChainPinMismatch": hikoutei.ErrChainPinMismatch, "ErrChainRestarted": hikoutei.ErrChainRestarted,
	"ErrEventPayloadMalformed": hikoutei.ErrEventPayloadMalformed, "ErrStoreIDMismatch": hikoutei.ErrStoreIDMismatch,
	"ErrStoreLogMissing": hikoutei.ErrStoreLogMissing, "ErrStandby": hikoutei.ErrStandby,
	"ErrAsOfOutOfRange":    hikoutei.ErrAsOfOutOfRange,
	"ErrReplicationFenced": hikoutei.ErrReplicationFenced, "ErrReplicationTakeoverFailed": hikoutei.ErrReplicationTakeoverFailed,
	"ErrReplicationNoPrimaryYet": hikoutei.ErrReplicationNoPrimaryYet, "ErrLeaseHeld": hikoutei.ErrLeaseHeld,
	"ErrReplicationStreamPurged": hikoutei.ErrReplicationStreamPurged, "ErrReplicaSegmentMismatch": hikoutei.ErrReplicaSegmentMismatch,
	"ErrStaleWriterFence": hikoutei.ErrStaleWriterFence, "ErrNotAStore": hikoutei.ErrNotAStore,
	"ErrSyncStartup": hikoutei.ErrSyncStartup, "ErrSyncRouteEmpty": hikoutei.ErrSyncRouteEmpty, "ErrSyncRouteSpreadsheetTwice": hikoutei.ErrSyncRouteSpreadsheetTwice, "ErrSyncRouteEntityTwice": hikoutei.ErrSyncRouteEntityTwice, "ErrSyncRouteEntityUnknown": hikoutei.ErrSyncRouteEntityUnknown, "ErrSyncBlocked": hikoutei.ErrSyncBlocked, "ErrSyncNotProvisioned": hikoutei.ErrSyncNotProvisioned, "ErrSyncNotConfigured": hikoutei.ErrSyncNotConfigured, "ErrWakeSecretInvalid": hikoutei.ErrWakeSecretInvalid, "ErrLogDamaged": hikoutei.ErrLogDamaged, "ErrMirrorBehind": hikoutei.ErrMirrorBehind, "ErrLogFileReplaced": hikoutei.ErrLogFileReplaced, "ErrTargetInsideStore": hikoutei.ErrTargetInsideStore, "ErrSyncDiverged": hikoutei.ErrSyncDiverged,
	"ErrConflictOpen": hikoutei.ErrConflictOpen, "ErrConflictNotFound": hikoutei.ErrConflictNotFound,
	"ErrAckStale": hikoutei.ErrAckStale, "ErrAckRejected": hikoutei.ErrAckRejected, "ErrConflictNotOpen": hikoutei.ErrConflictNotOpen,
	"ErrConflictStale": hikoutei.ErrConflictStale, "ErrConflictBlocked": hikoutei.ErrConflictBlocked,
	"ErrCommandIDReused": hikoutei.ErrCommandIDReused, "ErrInvalidResolution": hikoutei.ErrInvalidResolution,
	"ErrSubscriptionHandler": hikoutei.ErrSubscriptionHandler, "ErrSubscriptionPanic": hikoutei.ErrSubscriptionPanic,
	"ErrSubscriptionActive": hikoutei.ErrSubscriptionActive, "ErrInvalidSubscription": hikoutei.ErrInvalidSubscription,
	"ErrSubscriptionCheckpoint": hikoutei.ErrSubscriptionCheckpoint, "ErrSubscriptionCheckpointWrite": hikoutei.ErrSubscriptionCheckpointWrite,
	"ErrQuarantineNotFound": hikoutei.ErrQuarantineNotFound, "ErrQuarantineNotDismissable": hikoutei.ErrQuarantineNotDismissable,
	"ErrReplayGap": hikoutei.ErrReplayGap, "ErrReplayTarget": hikoutei.ErrReplayTarget,
	"ErrReplayTargetInStore": hikoutei.ErrReplayTargetInStore, "ErrBackupTarget": hikoutei.ErrBackupTarget,
	"ErrBackupCorrupt": hikoutei.ErrBackupCorrupt, "ErrRestoreTarget": hikoutei.ErrRestoreTarget, "ErrRestoreSource": hikoutei.ErrRestoreSource,
	"ErrRestoreIncomplete": hikoutei.ErrRestoreIncomplete,
	"ErrInvalidInterval":   hikoutei.ErrInvalidInterval, "ErrInvalidNATSURL": hikoutei.ErrInvalidNATSURL,
	"ErrFailpointsNotCompiled": hikoutei.ErrFailpointsNotCompiled, "ErrFailpointUnknown": hikoutei.ErrFailpointUnknown,
	"ErrFailpointSpecInvalid": hikoutei.ErrFailpointSpecInvalid,
	"ErrShapeIncompatible":    hikoutei.ErrShapeIncompatible, "ErrMigrationInvalid": hikoutei.ErrMigrationInvalid,
	"ErrMigrationFailed": hikoutei.ErrMigrationFailed,
	"ErrAdoptNeedsSync":  hikoutei.ErrAdoptNeedsSync, "ErrAdoptEntityNotDeclared": hikoutei.ErrAdoptEntityNotDeclared,
	"ErrAdoptTabNotFound": hikoutei.ErrAdoptTabNotFound, "ErrAdoptTabAdopted": hikoutei.ErrAdoptTabAdopted,
	"ErrAdoptTabReserved": hikoutei.ErrAdoptTabReserved, "ErrAdoptTabChanged": hikoutei.ErrAdoptTabChanged, "ErrAdoptInterrupted": hikoutei.ErrAdoptInterrupted,
	"ErrAdoptHeaderDuplicate": hikoutei.ErrAdoptHeaderDuplicate, "ErrAdoptKeyColumnMissing": hikoutei.ErrAdoptKeyColumnMissing,
	"ErrAdoptMapInvalid": hikoutei.ErrAdoptMapInvalid,
}

// declaredSentinels returns the names of the Err variables errors.go declares.
func declaredSentinels(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for _, id := range vs.Names {
				if strings.HasPrefix(id.Name, "Err") {
					names = append(names, id.Name)
				}
			}
		}
		return true
	})
	return names
}

// readmeRootCodes returns the codes of docs/errors.md's table
// that the table says the root package returns (package column
// "hikoutei", or re-exported as hikoutei.ErrX), except those only ever
// wrapped in another root code.
func readmeRootCodes(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(raw), "\n## Every code\n")
	table, _, _ = strings.Cut(table, "\n## ")
	code := regexp.MustCompile("`([a-z][a-z0-9_]+)`")
	var codes []string
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) < 3 || !strings.HasPrefix(cells[0], "| `") {
			continue
		}
		pkg := cells[1]
		root := strings.HasPrefix(pkg, "hikoutei") && !strings.Contains(pkg, "wrapped in")
		if !root && !strings.Contains(pkg, "hikoutei.Err") {
			continue
		}
		for _, m := range code.FindAllStringSubmatch(cells[0], -1) {
			codes = append(codes, m[1])
		}
	}
	return codes
}

// Every Err variable of errors.go is in rootSentinels, and its text is a
// stable snake_case code.
func TestEverySentinelIsListedWithASnakeCaseCode(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	for _, name := range declaredSentinels(t) {
		err, ok := rootSentinels[name]
		if !ok {
			t.Errorf("errors.go declares %s; add it to rootSentinels", name)
			continue
		}
		if !snake.MatchString(err.Error()) {
			t.Errorf("%s's text %q is not a snake_case code", name, err.Error())
		}
	}
}

// Every code docs/errors.md's table says the root API returns can be matched
// with errors.Is against a sentinel of the root package: a user never has
// to import events (or another package) to match an error of Open,
// Commit, a read or a resolution.
func TestEveryRootErrorCodeOfTheREADMEHasARootSentinel(t *testing.T) {
	byCode := map[string]string{}
	for name, err := range rootSentinels {
		byCode[err.Error()] = name
	}
	codes := readmeRootCodes(t)
	if len(codes) < 20 {
		t.Fatalf("found only %d root codes in docs/errors.md's table: %v", len(codes), codes)
	}
	for _, c := range codes {
		if _, ok := byCode[c]; !ok {
			t.Errorf("docs/errors.md's table names %s for package hikoutei, but no hikoutei.Err… has that code", c)
		}
	}
}

// A second Open of a store this process holds fails with store_locked,
// which errors.Is matches against hikoutei.ErrStoreLocked.
func TestStoreLockedMatchesTheRootSentinel(t *testing.T) {
	dir := t.TempDir()
	opts := hikoutei.Options{NoAdmin: true, OpenTimeout: 50 * time.Millisecond}
	s, err := hikoutei.Open(t.Context(), dir, opts, hikoutei.Entity[Airport]("Airport"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s2, err := hikoutei.Open(t.Context(), dir, opts, hikoutei.Entity[Airport]("Airport"))
	if err == nil {
		s2.Close()
		t.Fatal("a second Open of a held store succeeded")
	}
	if !errors.Is(err, hikoutei.ErrStoreLocked) {
		t.Fatalf("second Open: %v; want it to match hikoutei.ErrStoreLocked", err)
	}
}

// R2, the class: every sentinel of the root package is its own stable
// code for ErrorCode (what /healthz, metrics and traces carry), however it
// is wrapped: a code ErrorCode cannot recognise (e.g. one without an
// underscore) would be reported as "error".
func TestR2_EverySentinelIsItsOwnErrorCode(t *testing.T) {
	for name, err := range rootSentinels {
		if got := hikoutei.ErrorCode(fmt.Errorf("%w: detail", err)); got != err.Error() {
			t.Errorf("%s: ErrorCode = %q, want %q", name, got, err.Error())
		}
	}
}
