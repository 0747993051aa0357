package hikoutei

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// rootErrors are the root package's sentinel errors by name.
var rootErrors = map[string]error{
	"ErrAckRejected":                 ErrAckRejected,
	"ErrAckStale":                    ErrAckStale,
	"ErrAdoptEntityNotDeclared":      ErrAdoptEntityNotDeclared,
	"ErrAdoptHeaderDuplicate":        ErrAdoptHeaderDuplicate,
	"ErrAdoptKeyColumnMissing":       ErrAdoptKeyColumnMissing,
	"ErrAdoptMapInvalid":             ErrAdoptMapInvalid,
	"ErrAdoptNeedsSync":              ErrAdoptNeedsSync,
	"ErrAdoptTabAdopted":             ErrAdoptTabAdopted,
	"ErrAdoptTabChanged":             ErrAdoptTabChanged,
	"ErrAdoptInterrupted":            ErrAdoptInterrupted,
	"ErrAdoptTabNotFound":            ErrAdoptTabNotFound,
	"ErrAdoptTabReserved":            ErrAdoptTabReserved,
	"ErrAsOfOutOfRange":              ErrAsOfOutOfRange,
	"ErrBackupCorrupt":               ErrBackupCorrupt,
	"ErrBackupTarget":                ErrBackupTarget,
	"ErrChainBroken":                 ErrChainBroken,
	"ErrChainPinMismatch":            ErrChainPinMismatch,
	"ErrChainRestarted":              ErrChainRestarted,
	"ErrCommandIDReused":             ErrCommandIDReused,
	"ErrConflictBlocked":             ErrConflictBlocked,
	"ErrConflictNotFound":            ErrConflictNotFound,
	"ErrConflictNotOpen":             ErrConflictNotOpen,
	"ErrConflictOpen":                ErrConflictOpen,
	"ErrConflictStale":               ErrConflictStale,
	"ErrEventPayloadMalformed":       ErrEventPayloadMalformed,
	"ErrEventTypeUnknown":            ErrEventTypeUnknown,
	"ErrFailpointSpecInvalid":        ErrFailpointSpecInvalid,
	"ErrFailpointUnknown":            ErrFailpointUnknown,
	"ErrFailpointsNotCompiled":       ErrFailpointsNotCompiled,
	"ErrInvalidEntity":               ErrInvalidEntity,
	"ErrPersonalPrimaryKey":          ErrPersonalPrimaryKey,
	"ErrPersonalKeysLost":            ErrPersonalKeysLost,
	"ErrPersonalKeyFile":             ErrPersonalKeyFile,
	"ErrSealedValueMalformed":        ErrSealedValueMalformed,
	"ErrInvalidInterval":             ErrInvalidInterval,
	"ErrInvalidNATSURL":              ErrInvalidNATSURL,
	"ErrInvalidPrimaryKey":           ErrInvalidPrimaryKey,
	"ErrInvalidQuery":                ErrInvalidQuery,
	"ErrInvalidResolution":           ErrInvalidResolution,
	"ErrInvalidSubscription":         ErrInvalidSubscription,
	"ErrInvalidValue":                ErrInvalidValue,
	"ErrLeaseExpired":                ErrLeaseExpired,
	"ErrLeaseFileInvalid":            ErrLeaseFileInvalid,
	"ErrLeaseHeld":                   ErrLeaseHeld,
	"ErrLogBehindReadModel":          ErrLogBehindReadModel,
	"ErrLogCommitUncertain":          ErrLogCommitUncertain,
	"ErrLogCorrupt":                  ErrLogCorrupt,
	"ErrLogDamaged":                  ErrLogDamaged,
	"ErrLogFileReplaced":             ErrLogFileReplaced,
	"ErrLogRecordCorrupt":            ErrLogRecordCorrupt,
	"ErrLogWrite":                    ErrLogWrite,
	"ErrMigrationFailed":             ErrMigrationFailed,
	"ErrMigrationInvalid":            ErrMigrationInvalid,
	"ErrMirrorBehind":                ErrMirrorBehind,
	"ErrNonUnique":                   ErrNonUnique,
	"ErrNotAStore":                   ErrNotAStore,
	"ErrNotFound":                    ErrNotFound,
	"ErrPrimaryKeyChanged":           ErrPrimaryKeyChanged,
	"ErrQuarantineNotDismissable":    ErrQuarantineNotDismissable,
	"ErrQuarantineNotFound":          ErrQuarantineNotFound,
	"ErrReadModelBehind":             ErrReadModelBehind,
	"ErrReadModelCorrupt":            ErrReadModelCorrupt,
	"ErrReadModelUnavailable":        ErrReadModelUnavailable,
	"ErrReplayGap":                   ErrReplayGap,
	"ErrReplayTarget":                ErrReplayTarget,
	"ErrReplayTargetInStore":         ErrReplayTargetInStore,
	"ErrReplicationFenced":           ErrReplicationFenced,
	"ErrReplicationNoPrimaryYet":     ErrReplicationNoPrimaryYet,
	"ErrReplicationTakeoverFailed":   ErrReplicationTakeoverFailed,
	"ErrRestoreIncomplete":           ErrRestoreIncomplete,
	"ErrRestoreSource":               ErrRestoreSource,
	"ErrRestoreTarget":               ErrRestoreTarget,
	"ErrSealRefused":                 ErrSealRefused,
	"ErrReplicaSegmentMismatch":      ErrReplicaSegmentMismatch,
	"ErrReplicationStreamPurged":     ErrReplicationStreamPurged,
	"ErrRetentionFailing":            ErrRetentionFailing,
	"ErrSegmentDamaged":              ErrSegmentDamaged,
	"ErrSegmentStoreUnavailable":     ErrSegmentStoreUnavailable,
	"ErrInvalidSegmentsURL":          ErrInvalidSegmentsURL,
	"ErrSegmentMissing":              ErrSegmentMissing,
	"ErrShapeIncompatible":           ErrShapeIncompatible,
	"ErrStaleWriterFence":            ErrStaleWriterFence,
	"ErrStandby":                     ErrStandby,
	"ErrStoreClosed":                 ErrStoreClosed,
	"ErrStoreIDMismatch":             ErrStoreIDMismatch,
	"ErrStoreLocked":                 ErrStoreLocked,
	"ErrStoreLogMissing":             ErrStoreLogMissing,
	"ErrSubscriptionActive":          ErrSubscriptionActive,
	"ErrSubscriptionCheckpoint":      ErrSubscriptionCheckpoint,
	"ErrSubscriptionCheckpointWrite": ErrSubscriptionCheckpointWrite,
	"ErrSubscriptionHandler":         ErrSubscriptionHandler,
	"ErrSubscriptionPanic":           ErrSubscriptionPanic,
	"ErrSyncBlocked":                 ErrSyncBlocked,
	"ErrSyncDiverged":                ErrSyncDiverged,
	"ErrSyncNotProvisioned":          ErrSyncNotProvisioned,
	"ErrSyncStartup":                 ErrSyncStartup,
	"ErrSyncRouteEmpty":              ErrSyncRouteEmpty,
	"ErrSyncRouteSpreadsheetTwice":   ErrSyncRouteSpreadsheetTwice,
	"ErrSyncRouteEntityTwice":        ErrSyncRouteEntityTwice,
	"ErrSyncRouteEntityUnknown":      ErrSyncRouteEntityUnknown,
	"ErrDiskFilling":                 ErrDiskFilling,
	"ErrDiskFull":                    ErrDiskFull,
	"ErrReadModelSetAside":           ErrReadModelSetAside,
	"ErrSyncNotConfigured":           ErrSyncNotConfigured,
	"ErrWakeSecretInvalid":           ErrWakeSecretInvalid,
	"ErrTargetInsideStore":           ErrTargetInsideStore,
	"ErrUnitDone":                    ErrUnitDone,
	"ErrUnknownField":                ErrUnknownField,
	"ErrUnregisteredType":            ErrUnregisteredType,
}

// TestGoDocShowsEverySentinelsCode: go doc shows a sentinel's code either
// in its value (errors.New("code")) or in its doc comment, also for the
// sentinels the root package takes from the engine; and rootErrors lists
// every exported sentinel, so a new one is checked too.
func TestGoDocShowsEverySentinelsCode(t *testing.T) {
	seen := map[string]bool{}
	for name, text := range rootSentinelDocs(t) {
		seen[name] = true
		err, ok := rootErrors[name]
		if !ok {
			t.Errorf("%s is not in rootErrors", name)
			continue
		}
		if !strings.Contains(text, err.Error()) {
			t.Errorf("go doc of %s does not show its code %q", name, err.Error())
		}
	}
	for name := range rootErrors {
		if !seen[name] {
			t.Errorf("rootErrors lists %s, which the package does not declare", name)
		}
	}
}

// rootSentinelDocs is each exported Err variable's doc comment and value
// as the source spells them.
func rootSentinelDocs(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				addSentinelDocs(out, g, fset)
			}
		}
	}
	return out
}

func addSentinelDocs(out map[string]string, g *ast.GenDecl, fset *token.FileSet) {
	for _, s := range g.Specs {
		vs := s.(*ast.ValueSpec)
		for i, n := range vs.Names {
			if !n.IsExported() || !strings.HasPrefix(n.Name, "Err") || i >= len(vs.Values) {
				continue
			}
			var b strings.Builder
			b.WriteString(g.Doc.Text() + vs.Doc.Text())
			if lit, ok := vs.Values[i].(*ast.CallExpr); ok && len(lit.Args) == 1 {
				if bl, ok := lit.Args[0].(*ast.BasicLit); ok {
					b.WriteString(bl.Value)
				}
			}
			out[n.Name] = b.String()
		}
	}
}
