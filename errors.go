package hikoutei

import (
	"errors"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/disk"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
	"github.com/hikoutei/hikoutei-go/internal/wakehook"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Sentinel errors of the public API. Each has a stable snake_case code as
// its text; match with errors.Is. Typed details (which stream, which
// holder) are in the errors of the events package, through errors.As.
var (
	// ErrInvalidEntity (invalid_entity_definition): an entity declaration is unusable (no or several
	// primary keys, a non-string key, an unsupported field type, a bad name).
	ErrInvalidEntity = engine.ErrInvalidEntity
	// ErrUnregisteredType: a value whose type was not declared at Open.
	ErrUnregisteredType = errors.New("entity_type_unregistered")
	// ErrInvalidPrimaryKey: a key is empty, has leading/trailing white space
	// or control characters, or is not valid UTF-8.
	ErrInvalidPrimaryKey = errors.New("invalid_primary_key")
	// ErrPrimaryKeyChanged: an entity loaded in a unit of work was persisted
	// with a different key. Keys are immutable; persist a new entity and
	// remove the old one instead.
	ErrPrimaryKeyChanged = errors.New("primary_key_changed")
	// ErrUnknownField (unknown_field): a query names a field the entity does not have.
	ErrUnknownField = projector.ErrUnknownField
	// ErrInvalidQuery (invalid_query): a query is malformed — an unknown field, or a
	// filter value of the wrong type for its field. Such errors also wrap
	// ErrUnknownField or ErrInvalidValue, which say which.
	ErrInvalidQuery = projector.ErrInvalidQuery
	// ErrInvalidValue (invalid_field_value): a field value has no canonical form (NaN, ±Inf,
	// invalid UTF-8, a time outside years 1–9999).
	ErrInvalidValue = aggregates.ErrInvalidValue
	// ErrNotFound (entity_not_found): Get or FindOne found nothing; Remove of a missing entity.
	ErrNotFound = aggregates.ErrEntityNotFound
	// ErrNonUnique: FindOne matched more than one entity.
	ErrNonUnique = errors.New("entity_not_unique")
	// ErrUnitDone: a unit of work was used after Commit.
	ErrUnitDone = errors.New("unit_already_committed")
	// ErrStoreClosed (store_closed): the store was used after Close.
	ErrStoreClosed = engine.ErrStoreClosed
	// ErrReadModelBehind (read_model_behind): the commit is durable in the log, but applying it
	// to read.sqlite failed; the store retries before the next commit and
	// on reopen. Reads may not show the commit until then.
	ErrReadModelBehind = engine.ErrReadModelBehind
	// ErrReadModelUnavailable (read_model_unavailable): the read model could not be brought up to
	// the log before the unit was decided (e.g. the disk is full): nothing
	// was committed. Health().Local reports it until a repair succeeds.
	ErrReadModelUnavailable = engine.ErrReadModelUnavailable
	// ErrLogWrite (log_write_failed): the log could not write the unit (disk full, I/O
	// error): nothing was committed. Health().Local reports it until a
	// commit succeeds.
	ErrLogWrite = engine.ErrLogWrite
	// ErrLogCommitUncertain (log_commit_uncertain): the log's commit failed after its records may
	// have reached the file (a failed fsync); whether the unit is durable
	// is unknown. The store refuses every further commit until it is
	// closed and reopened, which shows what the log holds.
	ErrLogCommitUncertain = engine.ErrLogCommitUncertain
	// ErrLogBehindReadModel (log_behind_read_model): at Open, the read model had applied records
	// past the log head — the log lost acknowledged records (a damaged
	// page, an older log.db restored). Open refuses and changes nothing
	// (salvage can still recover them) unless Options.AcceptLogGap.
	ErrLogBehindReadModel = engine.ErrLogBehindReadModel
	// ErrReadModelCorrupt (read_model_corrupt): a read found a row of read.sqlite that does not
	// match its digest (damaged, or edited outside the store); no value of
	// it is returned (*projector.CorruptRowError names table and key). The
	// log is intact: stop the store and run `hikoutei replay --dir D` (or
	// RebuildReadModel) to rebuild it; the damaged file is kept aside.
	ErrReadModelCorrupt = projector.ErrReadModelCorrupt
	// ErrStoreLocked (store_locked): another process has the store open; the error names
	// the holder (*events.StoreLockedError).
	ErrStoreLocked = events.ErrStoreLocked
	// ErrLeaseExpired (lease_expired): this store's own writer lease ran
	// out (its heartbeat could not renew it in time); its commits are
	// refused.
	ErrLeaseExpired = events.ErrLeaseExpired
	// ErrLeaseFileInvalid (lease_file_invalid): Open found a lease.toml
	// that is not the lease's four-key shape or not a small regular file
	// (*events.LeaseFileError lists every problem).
	ErrLeaseFileInvalid = events.ErrLeaseFileInvalid
	// ErrLogCorrupt (log_corrupt): log.db's structure is damaged; Open and
	// reads refuse, appends stop (*events.LogCorruptError names the
	// check, page and sequence). `hikoutei salvage` recovers what is
	// readable.
	ErrLogCorrupt = events.ErrLogCorrupt
	// ErrLogRecordCorrupt (log_record_corrupt): a log record is torn or
	// fails its checksum (*events.CorruptRecordError names the sequence).
	ErrLogRecordCorrupt = events.ErrCorruptRecord
	// ErrChainBroken (chain_broken): verification found a record that does not continue
	// the log's hash chain; *events.ChainBrokenError names its sequence.
	ErrChainBroken = events.ErrChainBroken
	// ErrSegmentMissing (segment_missing): a sealed segment the log vouches
	// for is not in the store's segments folder (*events.SegmentError names it).
	ErrSegmentMissing = events.ErrSegmentMissing
	// ErrSegmentDamaged (segment_damaged): a sealed segment's file is not
	// the one the log vouches for (*events.SegmentError names it).
	ErrSegmentDamaged = events.ErrSegmentDamaged
	// ErrSegmentStoreUnavailable (segment_store_unavailable): the store
	// holding the sealed segments (Options.Segments: a folder or an
	// object store) cannot be reached or refused a read or a write, or its
	// URL names no store this program links; the segment is not known to
	// be missing (*events.SegmentError names the one a read needed).
	// Health().Segments carries it until the store answers again.
	ErrSegmentStoreUnavailable = events.ErrSegmentStoreUnavailable
	// ErrDiskFilling (disk_filling): the filesystem holding the store is
	// above 90 % used or fills within 7 days at the store's growth
	// (Health().Disk). A warning: commits go on.
	ErrDiskFilling = disk.ErrDiskFilling
	// ErrDiskFull (disk_full): the filesystem holding the store is above
	// 98 % used (Health().Disk): the next commits may fail to write.
	ErrDiskFull = disk.ErrDiskFull
	// ErrReadModelSetAside (read_model_set_aside): the store directory
	// keeps read models the store set aside (unusable, replaced by a
	// rebuild, ahead of the log) and never deletes (Health().SetAside says
	// how many, their bytes and the oldest's time). A notice: commits go
	// on; inspect them, then remove them with `hikoutei setaside`.
	ErrReadModelSetAside = disk.ErrReadModelSetAside
	// ErrRetentionFailing (retention_failing): the retention policy's
	// last background seal failed (Health().Retention wraps the cause).
	// A warning: commits go on, log.db keeps the records.
	ErrRetentionFailing = engine.ErrRetentionFailing
	// ErrSealRefused (seal_refused): a seal would move nothing, or what
	// must stay in log.db.
	ErrSealRefused = events.ErrSealRefused
	// ErrChainPinMismatch (chain_pin_mismatch): the log does not extend a
	// pinned chain head (*events.ChainPinError).
	ErrChainPinMismatch = events.ErrChainPinMismatch
	// ErrChainRestarted (chain_restarted): the log's hash chain restarts
	// after a hole a salvage left, so verification cannot vouch for the
	// records after it (*events.ChainRestartedError names the first hole
	// and where the chain restarts); VerifyOptions.AcceptSalvageHoles
	// accepts holes explicitly.
	ErrChainRestarted = events.ErrChainRestarted
	// ErrEventTypeUnknown (event_type_unknown): the log holds a record of
	// a type this build does not know (a newer build wrote it): Open,
	// Replay and reads refuse rather than skip it.
	ErrEventTypeUnknown = events.ErrUnknownEventType
	// ErrEventPayloadMalformed (event_payload_malformed): a log record's
	// payload does not have its type's shape (*events.PayloadError).
	ErrEventPayloadMalformed = events.ErrMalformedPayload
	// ErrStoreIDMismatch (store_id_mismatch): in replicated mode, the
	// directory holds the log of another store than the stream's.
	ErrStoreIDMismatch = events.ErrStoreIDMismatch
	// ErrStoreLogMissing (store_log_missing): a directory that held a store (read model,
	// snapshots, lease file, …) has no usable log.db; Open creates nothing
	// there. See *events.StoreLogMissingError.
	ErrStoreLogMissing = events.ErrStoreLogMissing
	// ErrAsOfOutOfRange (as_of_out_of_range): AsOf was asked for a point
	// outside the log: sequence 0, a sequence past the head, or a time
	// before the first record's.
	ErrAsOfOutOfRange = engine.ErrAsOfOutOfRange
	// ErrStandby (replication_standby): the store is a warm standby of a
	// replicated store: it serves reads; its primary takes the commits
	// (docs/replication.md).
	ErrStandby = engine.ErrStandby
	// ErrReplicationFenced (replication_fenced): in replicated mode, another primary took the
	// store over: this store's commits are refused by the stream (and by
	// the store from then on); Health().Local reports it.
	ErrReplicationFenced = events.ErrReplicaFenced
	// ErrReplicationTakeoverFailed (replication_takeover_failed): a standby took the lease but could
	// not open the store as the primary; it gave the lease up.
	ErrReplicationTakeoverFailed = engine.ErrTakeoverFailed
	// ErrReplicationNoPrimaryYet (replication_no_primary_yet): a standby was opened on a replicated
	// store no primary has written yet; start the primary first.
	ErrReplicationNoPrimaryYet = engine.ErrStandbyTooEarly
	// ErrReplicationStreamPurged (replication_stream_purged): a standby (or a
	// primary catching up) needs commits its stream no longer holds: every
	// host sealed them and the stream purged them. Restore a backup of a
	// host of the store taken after them, then follow the stream.
	ErrReplicationStreamPurged = engine.ErrStreamPurged
	// ErrReplicaSegmentMismatch (replica_segment_mismatch): applying a
	// replicated seal, this host built from its own records a segment
	// other than the one the primary's seal vouches for (range, chain,
	// counts or file digest); nothing was applied (*events.SegmentError).
	ErrReplicaSegmentMismatch = events.ErrReplicaSegmentMismatch
	// ErrLeaseHeld (lease_held): a live writer holds the store's lease.
	ErrLeaseHeld = events.ErrLeaseHeld
	// ErrStaleWriterFence (stale_writer_fence): this store's writer lease was taken over; its
	// commits are refused.
	ErrStaleWriterFence = events.ErrStaleWriterFence
	// ErrNotAStore (not_a_store): a directory that holds no store; nothing is created.
	ErrNotAStore = engine.ErrNotAStore
	// ErrSyncStartup (sync_startup_failed): sync is configured but cannot start (no provider, an
	// invalid spreadsheet id or cadence, a NATS configuration error).
	ErrSyncStartup = engine.ErrSyncStartup
	// ErrSyncRouteEmpty (sync_route_empty): a SyncOptions.Routes entry
	// names no spreadsheet or no entity (wrapped in ErrSyncStartup).
	ErrSyncRouteEmpty = engine.ErrSyncRouteEmpty
	// ErrSyncRouteSpreadsheetTwice (sync_route_spreadsheet_twice): a route
	// names SyncOptions.SpreadsheetID or another route's spreadsheet
	// (wrapped in ErrSyncStartup).
	ErrSyncRouteSpreadsheetTwice = engine.ErrSyncRouteSpreadsheetTwice
	// ErrSyncRouteEntityTwice (sync_route_entity_twice): an entity is in
	// two routes, or twice in one (wrapped in ErrSyncStartup).
	ErrSyncRouteEntityTwice = engine.ErrSyncRouteEntityTwice
	// ErrSyncRouteEntityUnknown (sync_route_entity_unknown): a route names
	// an entity the store does not declare (wrapped in ErrSyncStartup).
	ErrSyncRouteEntityUnknown = engine.ErrSyncRouteEntityUnknown
	// ErrSyncBlocked (sync_blocked) is Health.Sync's code when sync health
	// is blocked; the reason code follows it.
	ErrSyncBlocked = engine.ErrSyncBlocked
	// ErrSyncNotProvisioned (sync_not_provisioned) is Health.Sync's code
	// before the spreadsheet was provisioned; the last provisioning
	// error, when there was one, follows it.
	ErrSyncNotProvisioned = engine.ErrSyncNotProvisioned
	// ErrSyncNotConfigured (sync_not_configured): a request for the sync
	// workers (a wake handler) on a store whose pollers take no wake-ups:
	// it runs without sync, or with SyncOptions.Manual.
	ErrSyncNotConfigured = engine.ErrSyncNotConfigured
	// ErrWakeSecretInvalid (wake_secret_invalid): a wake handler's secret
	// is shorter than 32 bytes.
	ErrWakeSecretInvalid = wakehook.ErrSecret
	// ErrLogDamaged (log_damaged): the check at Open found a damaged
	// record, page or chain link in log.db; the store reads, but refuses
	// every commit until the log is repaired (hikoutei doctor, salvage).
	ErrLogDamaged = engine.ErrLogDamaged
	// ErrLogFileReplaced (log_file_replaced): the store directory's
	// log.db is no longer the file the running store has open (replaced,
	// renamed away or removed under it), found within one heartbeat or at
	// the next commit: every commit is refused from then on (Health's
	// Local), since nothing appended to the open file would be found at
	// the path again.
	ErrLogFileReplaced = events.ErrLogFileReplaced
	// ErrMirrorBehind (nats_mirror_behind) is Health.Mirror's code when the
	// NATS event mirror has not received a committed record for longer
	// than its bound (NATSOptions.MirrorLagBound; *MirrorLagError).
	ErrMirrorBehind = engine.ErrMirrorBehind
	// ErrSyncDiverged (sync_diverged) is Health.Sync's code when the last
	// reconciliation found rows that differ from canonical state.
	ErrSyncDiverged = engine.ErrSyncDiverged
	// ErrConflictOpen (entity_has_open_conflict): removing an entity that has an unresolved conflict
	// fails closed; nothing of the unit commits.
	ErrConflictOpen = aggregates.ErrConflictOpen
	// ErrConflictNotFound (conflict_not_found): no conflict has that id.
	ErrConflictNotFound = engine.ErrConflictNotFound
	// ErrAckStale (acknowledge_stale): AcknowledgeSystem's fence (canonical revision, candidate
	// hash, candidate epoch) is no longer current (also ErrConflictStale).
	ErrAckStale = aggregates.ErrAckStale
	// ErrAckRejected (acknowledge_rejected): the conflict is not open, or is a legacy conflict
	// without candidate visible evidence.
	ErrAckRejected = aggregates.ErrAckRejected
	// ErrConflictNotOpen (conflict_not_open): ResolveConflict or
	// AcknowledgeSystem for a conflict that is already resolved.
	ErrConflictNotOpen = aggregates.ErrConflictNotOpen
	// ErrConflictStale (conflict_stale): the resolution's fence
	// (canonical revision, candidate hash, candidate epoch) is no longer
	// current: the person typed again, or an application commit raised the
	// field's revision. Nothing changed; look at the conflict again.
	ErrConflictStale = aggregates.ErrConflictStale
	// ErrConflictBlocked (conflict_blocked): no command can resolve the
	// conflict as asked: a legacy conflict without candidate visible
	// evidence, or UseSheet for a candidate whose value the read model
	// does not hold (recorded by an older build: rebuild the read model
	// with `hikoutei replay`).
	ErrConflictBlocked = aggregates.ErrConflictBlocked
	// ErrCommandIDReused (command_id_reused): a resolution repeated a
	// command id with another conflict, resolution or fence.
	ErrCommandIDReused = aggregates.ErrCommandIDReused
	// ErrInvalidResolution (invalid_resolution): ResolveConflict was given
	// a Resolution other than KeepSystem or UseSheet.
	ErrInvalidResolution = engine.ErrInvalidResolution
	// ErrSubscriptionHandler (subscription_handler_failed): a
	// subscription's handler returned an error; Subscribe stopped before
	// that event (*SubscriptionError names it).
	ErrSubscriptionHandler = engine.ErrSubscriptionHandler
	// ErrSubscriptionPanic (subscription_handler_panicked): a
	// subscription's handler panicked; the panic was recovered and
	// Subscribe stopped before that event.
	ErrSubscriptionPanic = engine.ErrSubscriptionPanic
	// ErrSubscriptionActive (subscription_active): a subscription of that
	// name already runs on this store.
	ErrSubscriptionActive = engine.ErrSubscriptionActive
	// ErrInvalidSubscription (invalid_subscription): an empty or
	// over-long subscription name, a nil handler, a negative batch size.
	ErrInvalidSubscription = engine.ErrInvalidSubscription
	// ErrSubscriptionCheckpoint (subscription_checkpoint_invalid): a
	// subscription's durable checkpoint is past the log head or negative
	// (a changed or damaged read model): Subscribe refuses to run it
	// rather than skip events, SubscriptionStatus.Err and `hikoutei
	// subscriptions` report it, and doctor fails on it.
	ErrSubscriptionCheckpoint = engine.ErrSubscriptionCheckpoint
	// ErrSubscriptionCheckpointWrite (subscription_checkpoint_write_failed):
	// recording a subscription's checkpoint failed (a full disk, the read
	// model's write lock held too long); Subscribe stopped, and the events
	// after the durable checkpoint are handed again at the next run.
	ErrSubscriptionCheckpointWrite = engine.ErrSubscriptionCheckpointWrite
	// ErrQuarantineNotFound (quarantine_entry_not_found): no quarantine
	// record has that id.
	ErrQuarantineNotFound = projector.ErrQuarantineEntryNotFound
	// ErrQuarantineNotDismissable (quarantine_not_dismissable): the record
	// is cleared, names no row, or its entity was removed.
	ErrQuarantineNotDismissable = aggregates.ErrQuarantineNotDismissable
	// ErrAdoptNeedsSync (adopt_sync_not_configured): Adopt on a store
	// opened without SyncOptions for the spreadsheet.
	ErrAdoptNeedsSync = engine.ErrAdoptNeedsSync
	// ErrAdoptEntityNotDeclared (adopt_entity_not_declared): the store
	// does not declare the entity to adopt into (the message lists those
	// it does): open it once with the application that declares it.
	ErrAdoptEntityNotDeclared = engine.ErrAdoptEntityNotDeclared
	// ErrAdoptTabNotFound (adopt_tab_not_found): the spreadsheet has no
	// tab of that title.
	ErrAdoptTabNotFound = engine.ErrAdoptTabNotFound
	// ErrAdoptTabAdopted (adopt_tab_already_adopted): the tab was adopted
	// already (it is kept as "<tab> (before hikoutei)"), or another tab
	// has that title: nothing is imported twice.
	ErrAdoptTabAdopted = engine.ErrAdoptTabAdopted
	// ErrAdoptTabReserved (adopt_tab_reserved): the tab is one of the
	// store's own (System, Input, Sync_Conflicts, …).
	ErrAdoptTabReserved = engine.ErrAdoptTabReserved
	// ErrAdoptTabChanged (adopt_tab_changed): the tab was renamed or
	// removed (or its kept title taken) between the read and the rename;
	// nothing was renamed: adopt again.
	ErrAdoptTabChanged = engine.ErrAdoptTabChanged
	// ErrAdoptInterrupted (adopt_interrupted, in Health.Adoption): an
	// adoption stopped before it kept its tab (killed, the machine
	// stopped, or it failed): the rows of its committed units are
	// records, the others are not quarantined, the tab is not renamed.
	// Adopting the same tab again finishes it.
	ErrAdoptInterrupted = engine.ErrAdoptInterrupted
	// ErrAdoptHeaderDuplicate (adopt_header_duplicate): two columns would
	// hold one field, or a Map rule's header names several columns: the
	// adoption fails closed.
	ErrAdoptHeaderDuplicate = layout.ErrAdoptHeaderDuplicate
	// ErrAdoptKeyColumnMissing (adopt_key_column_missing): no column of
	// the tab holds the entity's primary key (name it with Map).
	ErrAdoptKeyColumnMissing = layout.ErrAdoptKeyColumnMissing
	// ErrAdoptMapInvalid (adopt_map_invalid): a Map rule names no column
	// or an unknown field, gives a field twice, or NumbersAsText names a
	// field that is not text.
	ErrAdoptMapInvalid = layout.ErrAdoptMapInvalid
	// ErrReplayGap (replay_sequence_gap): an event source skipped a sequence.
	ErrReplayGap = engine.ErrReplayGap
	// ErrReplayTarget (replay_target_not_empty): a replay target already exists and replacing it was
	// not forced.
	ErrReplayTarget = engine.ErrReplayTarget
	// ErrReplayTargetInStore (replay_target_inside_store): a replay target is inside a store directory
	// (refused even when forced: only the store writes its own files).
	ErrReplayTargetInStore = engine.ErrReplayTargetInStore
	// ErrBackupTarget (backup_target_invalid): a backup target is inside
	// a store directory (any store's; ErrTargetInsideStore too), is not a
	// regular file (a directory, device, FIFO, socket or symbolic link),
	// or exists and replacing it was not forced.
	ErrBackupTarget = events.ErrBackupTarget
	// ErrTargetInsideStore (target_inside_store): a command's output (a
	// backup, a restored or salvaged store, a replayed read model, a
	// scratch copy) would be written inside a store directory: one that
	// holds a log.db, lease.toml or read.sqlite, or below it. A store's
	// directory is written only by that store.
	ErrTargetInsideStore = events.ErrTargetInsideStore
	// ErrBackupCorrupt (backup_corrupt): a backup fails verification; the
	// error names the sequence (*events.CorruptRecordError,
	// *events.LogCorruptError).
	ErrBackupCorrupt = events.ErrBackupCorrupt
	// ErrRestoreTarget (restore_target_not_empty): a restore target
	// directory exists and holds something.
	ErrRestoreTarget = events.ErrRestoreTarget
	// ErrRestoreSource (restore_source_invalid): `restore --from` names a
	// file that is not a regular one (a FIFO, a device, a directory) or
	// cannot be opened; it is refused before anything is copied.
	ErrRestoreSource = events.ErrRestoreSource
	// ErrRestoreIncomplete (restore_incomplete): a directory holds only
	// what a restore interrupted before it installed log.db leaves (its
	// copy of the log, .log.db.tmp-*, and segments/): no store; remove it
	// and restore again (*events.RestoreIncompleteError). Open, status
	// and restore into it refuse it with this code.
	ErrRestoreIncomplete = events.ErrRestoreIncomplete
	// ErrInvalidInterval (invalid_polling_interval): an interval variable (polling, full scan, rate
	// limit) is not a plain positive decimal integer of milliseconds; it
	// comes wrapped in ErrSyncStartup.
	ErrInvalidInterval = config.ErrInvalidInterval
	// ErrInvalidNATSURL (invalid_nats_url): HIKOUTEI_NATS_URL is not a list of nats://,
	// tls://, ws:// or wss:// URLs with a host; Open refuses it before
	// taking the lease (an *EnvError names the variable).
	ErrInvalidNATSURL = config.ErrInvalidNATSURL
	// ErrInvalidSegmentsURL (invalid_segments_url): HIKOUTEI_SEGMENTS_URL
	// or --segments is not a URL with a scheme, or a file URL that is not
	// file:///absolute/folder; commands stop with exit 2 naming it, never
	// repeating its value.
	ErrInvalidSegmentsURL = config.ErrInvalidSegmentsURL
	// ErrFailpointsNotCompiled (failpoints_not_compiled): HIKOUTEI_FAILPOINTS is set, but this build
	// has no failpoints (only test builds with -tags failpoints do).
	ErrFailpointsNotCompiled = failpoint.ErrNotCompiled
	// ErrFailpointUnknown (failpoint_unknown): HIKOUTEI_FAILPOINTS names a failpoint that does
	// not exist (builds with failpoints only).
	ErrFailpointUnknown = failpoint.ErrUnknown
	// ErrFailpointSpecInvalid (failpoint_spec_invalid): HIKOUTEI_FAILPOINTS is malformed (builds
	// with failpoints only).
	ErrFailpointSpecInvalid = failpoint.ErrSpec
	// ErrShapeIncompatible (shape_change_incompatible): the declared
	// entity shapes differ from the recorded ones in a way some current
	// record's value cannot take (a retype, a new primary key, a removed
	// entity that has records) and no migration maps it: Open refused and
	// wrote nothing (*ShapeChangeError names entity, field, change, how
	// many records and the first keys).
	ErrShapeIncompatible = engine.ErrShapeIncompatible
	// ErrMigrationInvalid (migration_invalid): a Migration cannot apply:
	// a bad version, an entity not declared, an Old type that is not the
	// last recorded shape, a New type that is not the declared one, two
	// waiting for one entity. Nothing was written.
	ErrMigrationInvalid = engine.ErrMigrationInvalid
	// ErrMigrationFailed (migration_failed): a migration's function
	// returned an error or panicked, produced an invalid record, mapped
	// two records to one key, or would move a record that has an open
	// conflict (*MigrationError names the key). Nothing was written.
	ErrMigrationFailed = engine.ErrMigrationFailed
	// ErrPersonalPrimaryKey (personal_primary_key): a primary key was
	// tagged personal. The key names the record in the log, anchors,
	// receipts and the outbox, which erasure cannot reach; Open refuses
	// the declaration (it also wraps ErrInvalidEntity).
	ErrPersonalPrimaryKey = errors.New("personal_primary_key")
	// ErrPersonalKeysLost (personal_keys_lost): a sealed personal value
	// names a key file this store no longer has (keys.db deleted,
	// replaced or restored from elsewhere) or a key it never held that no
	// erasure destroyed: the value is unreadable. Reads fail with it
	// rather than show an empty value, and Health().Keys reports it.
	ErrPersonalKeysLost = keyring.ErrKeysLost
	// ErrPersonalKeyFile (personal_key_file): the key file keys.db
	// could not be read or written (I/O error, damage): personal values
	// cannot be sealed or opened, and an erasure cannot finish (it is
	// finished at the next Open).
	ErrPersonalKeyFile = keyring.ErrKeyFile
	// ErrSealedValueMalformed (sealed_value_malformed): a value carries
	// the sealed prefix but cannot be opened: altered, or moved to another
	// field, entity or subject.
	ErrSealedValueMalformed = keyring.ErrSealedValueMalformed
)

// EnvError names the environment variable Open refused a value from
// (errors.As); it wraps ErrInvalidNATSURL, ErrFailpointsNotCompiled,
// ErrFailpointUnknown or ErrFailpointSpecInvalid.
type EnvError struct {
	Var string // e.g. HIKOUTEI_NATS_URL
	Err error  // wraps one of the errors above
}

func (e *EnvError) Error() string { return (*config.EnvError)(e).Error() }

// Unwrap returns the wrapped problem.
func (e *EnvError) Unwrap() error { return e.Err }
