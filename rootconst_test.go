package hikoutei

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/admin"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// TestRootConstantsSpellTheEnginesValues: the root package spells its
// constants out, so that go doc shows each value; each must equal the
// value the engine acts on.
func TestRootConstantsSpellTheEnginesValues(t *testing.T) {
	for _, c := range []struct{ name, root, engine string }{
		{"SyncOK", string(SyncOK), string(engine.SyncOK)},
		{"SyncBehind", string(SyncBehind), string(engine.SyncBehind)},
		{"SyncMigrating", string(SyncMigrating), string(engine.SyncMigrating)},
		{"SyncDiverged", string(SyncDiverged), string(engine.SyncDiverged)},
		{"SyncBlocked", string(SyncBlocked), string(engine.SyncBlocked)},
		{"ReasonDisplaced", string(ReasonDisplaced), string(engine.ReasonDisplaced)},
		{"ReasonAuthorityDiverged", string(ReasonAuthorityDiverged), string(engine.ReasonAuthorityDiverged)},
		{"ReasonAuthorityHeld", string(ReasonAuthorityHeld), string(engine.ReasonAuthorityHeld)},
		{"ReasonStopped", string(ReasonStopped), string(engine.ReasonStopped)},
		{"ReasonCredentials", string(ReasonCredentials), string(engine.ReasonCredentials)},
		{"ReasonAccessDenied", string(ReasonAccessDenied), string(engine.ReasonAccessDenied)},
		{"ReasonNotFound", string(ReasonNotFound), string(engine.ReasonNotFound)},
		{"ReasonQuota", string(ReasonQuota), string(engine.ReasonQuota)},
		{"ReasonUnreachable", string(ReasonUnreachable), string(engine.ReasonUnreachable)},
		{"ReasonMassDeletion", string(ReasonMassDeletion), string(engine.ReasonMassDeletion)},
		{"ReasonTabMissing", string(ReasonTabMissing), string(engine.ReasonTabMissing)},
		{"ReasonHeaderDrift", string(ReasonHeaderDrift), string(engine.ReasonHeaderDrift)},
		{"ReasonReconcileFailing", string(ReasonReconcileFailing), string(engine.ReasonReconcileFailing)},
		{"ReasonChainHeadAhead", string(ReasonChainHeadAhead), string(engine.ReasonChainHeadAhead)},
		{"ReasonColumnRetired", string(ReasonColumnRetired), string(engine.ReasonColumnRetired)},
		{"ReasonSheetsAccountOut", string(ReasonSheetsAccountOut), string(engine.ReasonAccountOut)},
		{"EnvSpreadsheetURL", string(EnvSpreadsheetURL), string(config.EnvSpreadsheetURL)},
		{"EnvCredentials", string(EnvCredentials), string(config.EnvCredentials)},
		{"EnvSheetsEndpoint", string(EnvSheetsEndpoint), string(config.EnvSheetsEndpoint)},
		{"EnvCredentialsPool", string(EnvCredentialsPool), string(config.EnvCredentialsPool)},
		{"EnvNATSURL", string(EnvNATSURL), string(config.EnvNATSURL)},
		{"EnvReplication", string(EnvReplication), string(config.EnvReplication)},
		{"EnvReplicationStore", string(EnvReplicationStore), string(config.EnvReplicationStore)},
		{"EnvReplicationReplicas", string(EnvReplicationReplicas), string(config.EnvReplicationReplicas)},
		{"ConflictOpen", string(ConflictOpen), string(aggregates.ConflictOpen)},
		{"ConflictResolved", string(ConflictResolved), string(aggregates.ConflictResolved)},
		{"AckApplied", string(AckApplied), string(aggregates.AckApplied)},
		{"AckStale", string(AckStale), string(aggregates.AckStale)},
		{"AckRejected", string(AckRejected), string(aggregates.AckRejected)},
		{"AdoptCreate", string(AdoptCreate), string(aggregates.AdoptCreate)},
		{"AdoptUnchanged", string(AdoptUnchanged), string(aggregates.AdoptUnchanged)},
		{"AdoptSkip", string(AdoptSkip), string(aggregates.AdoptSkip)},
		{"RolePrimary", string(RolePrimary), string(engine.RolePrimary)},
		{"RoleStandby", string(RoleStandby), string(engine.RoleStandby)},
		{"RoleFenced", string(RoleFenced), string(engine.RoleFenced)},
		{"DefaultMirrorLagBound", DefaultMirrorLagBound.String(), engine.DefaultMirrorLagBound.String()},
		{"Eq", string(Eq), string(projector.OpEq)},
		{"Lt", string(Lt), string(projector.OpLt)},
		{"Le", string(Le), string(projector.OpLe)},
		{"Gt", string(Gt), string(projector.OpGt)},
		{"Ge", string(Ge), string(projector.OpGe)},
		{"ActorApplication", string(ActorApplication), string(events.ActorApplication)},
		{"ActorCLI", string(ActorCLI), string(events.ActorCLI)},
		{"ActorSheet", string(ActorSheet), string(events.ActorSheet)},
		{"ActorAdopt", string(ActorAdopt), string(events.ActorAdopt)},
		{"SpanDispatch", SpanDispatch, effects.SpanDispatch},
		{"SpanPoll", SpanPoll, effects.SpanPoll},
		{"AdminSocketName", AdminSocketName, admin.SocketName},
		{"KeptSuffix", KeptSuffix, sheetsio.KeptSuffix},
	} {
		if c.root != c.engine {
			t.Errorf("%s = %q, the engine acts on %q", c.name, c.root, c.engine)
		}
	}
}
