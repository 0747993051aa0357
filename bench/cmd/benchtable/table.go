package main

import (
	"fmt"
	"math"
)

// The benchmarks behind each row (see bench/README.md).
const (
	commit64    = "BenchmarkCommit64Concurrent"
	floor64     = "BenchmarkRawFloor64"
	batch64     = "BenchmarkBoltBatchDefault64"
	single      = "BenchmarkCommitSingle"
	floorOne    = "BenchmarkRawFloorSingle"
	rebuild     = "BenchmarkRebuild"
	rawInsert   = "BenchmarkRawSQLiteInsert"
	safe10k     = "BenchmarkSafePath10k"
	raw10k      = "BenchmarkRawBatchUpdate10k"
	safeSync    = "BenchmarkSafePath10kSyncOnly"
	backfillUs  = "BenchmarkBackfillCities"
	backfillRw  = "BenchmarkRawBackfillCities"
	backfillSv  = "BenchmarkBackfillCitiesServe"
	backfillRb  = "BenchmarkRawBackfillCitiesBoth"
	poll10      = "BenchmarkPollUnchanged10Tabs"
	batchGet10  = "BenchmarkRawBatchGet10Tabs"
	drain       = "BenchmarkCoalescedDrain"
	logBytes    = "BenchmarkLogBytesPerSyncedRow"
	pollCities  = "BenchmarkPollUnchangedCities"
	getCities   = "BenchmarkRawBatchGetCities"
	chainAlt    = "BenchmarkAppend64ChainAlternating"
	verify      = "BenchmarkVerify"
	idle        = "BenchmarkIdleMinute"
	rawIdle     = "BenchmarkRawIdleMinute"
	freshHook   = "BenchmarkFreshnessHook"
	freshPoll   = "BenchmarkFreshnessPoll"
	pCommit     = "BenchmarkPersonalCommit/"
	pRebuild    = "BenchmarkPersonalRebuild/"
	openHistory = "BenchmarkOpenHistory"
	commitAfter = "BenchmarkCommitRateAfterHistory"
	hotLog      = "BenchmarkHotLogUnderRetention"
)

// table is every row of `make bench`, goals in bench/README.md.
func table(r runs) []Row {
	var rows []Row
	for _, s := range append(specs(r), historySpecs()...) {
		if !selected(rowStep(s.name)) {
			continue
		}
		rows = append(rows, s.row(r))
	}
	return rows
}

func specs(r runs) []spec {
	il := fmt.Sprintf(" (median of %d interleaved pairs; ratio = median of the pairs' ratios)", *count)
	cityNote := fmt.Sprintf(" (median of 3 passes per process, %d process(es), HIKOUTEI_BENCH_INBOUND_ROWS=%d; the goal is 50 MB at 171,075 rows, scaled to the rows measured: make bench BENCHFLAGS=-cityrows=171075 measures every city, its untimed sync of 2 × 171,075 rows taking minutes)", *cityPolls, *cityRows)
	pollGoal := 50 * float64(*cityRows) / 171075
	safeNote := "Google latency+quota emulator, default pacing, demo sync options; commit → all effects settled; " + safe10k + " ÷ " + raw10k + il
	return []spec{
		{"1a durable commits/s, 64 concurrent callers ÷ raw floor (bbolt Update + SQLite tx per 64)", metric{commit64, "commits/s", 0}, metric{floor64, "records/s", 0},
			ratioAtLeast(0.8), "commits/s", commit64 + " ÷ " + floor64 + il},
		{"1b durable commits/s, 64 concurrent callers ÷ bbolt default db.Batch", metric{commit64, "commits/s", 0}, metric{batch64, "records/s", 0},
			info, "commits/s", "information, folded into 1a (the raw floor itself moves between 1.6 and 6.2 × db.Batch with the machine's load); " + commit64 + " ÷ " + batch64 + il},
		{"2 single commit p99 ÷ raw floor p99 (one record)", metric{single, "p99-ms", 0}, metric{floorOne, "p99-ms", 0},
			ratioAtMost(1.5), "ms", single + " ÷ " + floorOne + il},
		{"3a read-model rebuild events/s ÷ raw SQLite insert rows/s (171,075 cities)", metric{rebuild, "events/s", 0}, metric{rawInsert, "rows/s", 0},
			ratioAtLeast(0.9), "events/s ÷ rows/s", rebuild + " ÷ " + rawInsert + ", HIKOUTEI_BENCH_DATA=cities" + il},
		{"3b rebuild of all 171,075 cities", metric{rebuild, "ns/op", 1e-9}, metric{rawInsert, "ns/op", 1e-9},
			oursBelow(10, " s"), "s", "one full Replay vs one full raw load" + il},
		{"4a 10,000 new rows through the full safe path (receipts, CAS, fencing)", metric{safe10k, "rows/s", 0}, metric{raw10k, "rows/s", 0},
			ratioAtLeast(0.75), "rows/s", safeNote},
		{"4b 10,000 rows safe path ÷ raw values.batchUpdate (sheets/v4, same emulator model)", metric{safe10k, "rows/s", 0}, metric{raw10k, "rows/s", 0},
			ratioAtLeast(0.75), "rows/s", "the same measurement as 4a, named by its ratio (issue 19's row 4b)"},
		{"4c CPU per synced row: ours ÷ raw client (the 10,000 rows of row 4)", metric{safe10k, "cpu-us/row", 0}, metric{raw10k, "cpu-us/row", 0},
			ratioAtMost(3), "CPU-µs/row", "the child process's CPU (user + system, getrusage) from the first commit (first raw request) until all is settled (written) ÷ 10,000; " +
				"each side alone in a child against a fresh emulator served by the runner, so the emulator's CPU is on neither side; " + safe10k + " ÷ " + raw10k + il},
		{"4d CPU per synced row, sync only (from the commits being durable to the rows being in the sheet) ÷ raw client", metric{safeSync, "cpu-us/row", 0}, metric{raw10k, "cpu-us/row", 0},
			ratioAtMost(3), "CPU-µs/row", "the same 10,000 rows committed first (not timed, no worker running), then the child's CPU from the dispatcher's start until every effect is settled ÷ 10,000: " +
				"claims, encoding, requests, receipts, settlement, not the commits; goal: row 4c's, for the sync alone; " + safeSync + " ÷ " + raw10k + il},
		{"5 171,075 cities backfill (System tab): rows/s ÷ raw values.batchUpdate", metric{backfillUs, "rows/s", 0}, metric{backfillRw, "rows/s", 0},
			ratioAtLeast(0.75), "rows/s", backfillRateNote()},
		{"5a 171,075 cities backfill: requests per 1,000 rows", metric{backfillUs, "req/1krows", 0}, metric{backfillRw, "req/1krows", 0},
			oursAtMost(2, ""), "requests/1k rows", backfillNote(r)},
		{"5b 171,075 cities backfill: peak RSS ÷ raw backfill", metric{backfillUs, "rss-MB", 0}, metric{backfillRw, "rss-MB", 0},
			ratioAtMost(1.3), "MB", fmt.Sprintf("peak RSS (VmHWM) of a child process running only the backfill (the emulator runs in the runner); baseline = raw sheets/v4 backfill child, run alone right after; median of %d pair(s)%s", *backfills, fewBackfills())},
		{fmt.Sprintf("5c %d cities backfilled to both tabs, poller and anti-entropy running: rows/s ÷ raw writing both tabs", *serveRows),
			metric{backfillSv, "rows/s", 0}, metric{backfillRb, "rows/s", 0}, ratioAtLeast(0.6), "rows/s", serveNote()},
		{fmt.Sprintf("5d %d cities backfilled to both tabs, poller and anti-entropy running: peak RSS ÷ raw writing both tabs", *serveRows),
			metric{backfillSv, "rss-MB", 0}, metric{backfillRb, "rss-MB", 0}, ratioAtMost(1.3), "MB", serveNote()},
		{"6 unchanged poll of 10 Input tabs: time per pass ÷ raw values.batchGet", metric{poll10, "ms/pass", 0}, metric{batchGet10, "ms/pass", 0},
			ratioAtMost(2), "ms/pass", "median of 5 passes after convergence per process; " + poll10 + " ÷ " + batchGet10 + il},
		{"6a unchanged poll of 10 Input tabs (Store.Poller().Poll): read requests", metric{poll10, "reads/op", 0}, metric{batchGet10, "reads/op", 0},
			oursEqual(1), "requests/poll", "mean over 5 polls after convergence; baseline = one raw values.batchGet of the 10 tabs"},
		{"6b unchanged poll of 10 Input tabs (Store.Poller().Poll): write requests", metric{poll10, "writes/op", 0}, metric{batchGet10, "writes/op", 0},
			oursEqual(0), "requests/poll", "ratio null: the baseline writes nothing"},
		{"7 drain after 100,000 commits on 5,000 keys ÷ drain after 5,000 single-row commits", metric{drain, "burst-drain-s", 0}, metric{drain, "base-drain-s", 0},
			ratioAtMost(1.5), "s", fmt.Sprintf("%s (internal/engine; in-process emulator, no latency model): the burst's outbox drained beside the baseline's, same benchmark; goal \"about the time of 5,000 rows\" read as ≤ 1.5×; %d pair(s)", drain, *drains)},
		{"8 log bytes per synced row (create + 2 tabs applied)", metric{logBytes, "log-B/row", 0}, metric{logBytes, "record-B/row", 0},
			oursAtMost(1600, " B"), "B/row", logBytes + " (root): ours = log.db bytes ÷ rows; baseline = the log's record bytes ÷ rows; ratio = log.db bytes ÷ sum of record bytes (file/records: information)"},
		{fmt.Sprintf("9a unchanged poll of %d cities (Input tab): allocated MB per pass", *cityRows), metric{pollCities, "alloc-MB/pass", 0}, metric{getCities, "alloc-MB/pass", 0},
			oursAtMost(math.Round(pollGoal*100)/100, " MB"), "MB/pass", pollCities + " ÷ " + getCities + cityNote},
		{fmt.Sprintf("9b unchanged poll of %d cities (Input tab): time per pass", *cityRows), metric{pollCities, "ms/pass", 0}, metric{getCities, "ms/pass", 0},
			info, "ms/pass", "information; " + pollCities + " ÷ " + getCities + cityNote},
		{fmt.Sprintf("11 idle serve with %d unchanged rows: CPU-s per minute", *idleRows), metric{atRows(idle, *idleRows), "cpu-s/min", 0},
			metric{atRows(rawIdle, *idleRows), "cpu-s/min", 0}, oursAtMost(idleGoal(*idleRows), " CPU-s"), "CPU-s/min", idleNote(*idleRows)},
		{fmt.Sprintf("11b idle serve with %d unchanged rows: CPU-s per minute", cities), metric{atRows(idle, cities), "cpu-s/min", 0},
			metric{atRows(rawIdle, cities), "cpu-s/min", 0}, oursAtMost(idleGoal(cities), " CPU-s"), "CPU-s/min", idleNote(cities)},
		{"12a a person's edit → in the store, p99, with the wake hook ÷ without it (60 s poll)", metric{freshHook, "edit-p99-s", 0}, metric{freshPoll, "edit-p99-s", 0},
			oursAtMost(5, " s"), "s", freshNote("from the person's edit in the emulator until Get returns it")},
		{"12b a person's edit → in the store, p50, with the wake hook ÷ without it", metric{freshHook, "edit-p50-s", 0}, metric{freshPoll, "edit-p50-s", 0},
			info, "s", "information; as 12a"},
		{"12c commit → visible in the sheet, p99, at 50 commits/s (with the hook ÷ without)", metric{freshHook, "visible-p99-s", 0}, metric{freshPoll, "visible-p99-s", 0},
			oursAtMost(3, " s"), "s", freshNote("from Commit returning until the emulator's System tab shows the update (sampled every 100 ms)")},
		{"12d commit → visible in the sheet, p50, at 50 commits/s (with the hook ÷ without)", metric{freshHook, "visible-p50-s", 0}, metric{freshPoll, "visible-p50-s", 0},
			info, "s", "information; as 12c"},
		{"13a durable commit of a new subject's record: personal fields ÷ plain", metric{pCommit + "personal/new", "ns/op", 1e-6}, metric{pCommit + "plain/new", "ns/op", 1e-6},
			info, "ms/commit", personalNote(pCommit+"{personal,plain}/new", "a record whose subject is new: its key is made and stored in keys.db (one more fsync)")},
		{"13b durable commit updating a record: personal fields ÷ plain", metric{pCommit + "personal/update", "ns/op", 1e-6}, metric{pCommit + "plain/update", "ns/op", 1e-6},
			info, "ms/commit", personalNote(pCommit+"{personal,plain}/update", "the subject's key exists")},
		{"13c rebuild (Replay) of 2,000 records: personal fields ÷ plain", metric{pRebuild + "personal/replay", "ns/record", 1e-3}, metric{pRebuild + "plain/replay", "ns/record", 1e-3},
			info, "µs/record", personalNote(pRebuild+"{personal,plain}/replay", "the sealed text is stored as it is: no key is used")},
		{"13d Find of 2,000 records: personal fields ÷ plain", metric{pRebuild + "personal/find-all", "ns/record", 1e-3}, metric{pRebuild + "plain/find-all", "ns/record", 1e-3},
			info, "µs/record", personalNote(pRebuild+"{personal,plain}/find-all", "each personal value opened with its subject's key")},
		{"10a durable appends of 64 records with the hash chain ÷ without it", metric{chainAlt, "events/s-chained", 0}, metric{chainAlt, "events/s-unchained", 0},
			ratioAtLeast(0.95), "events/s", chainNote()},
		{"10b audit verify of the 171,075 cities' log: events/s ÷ rebuild events/s", metric{verify, "events/s", 0}, metric{rebuild, "events/s", 0},
			info, "events/s", "information; " + verify + " (root: VerifyDir, HIKOUTEI_BENCH_DATA=cities, one process) ÷ row 3's " + rebuild},
	}
}

// chainNote says how row 10a measures.
func chainNote() string {
	return fmt.Sprintf("%s (events/): events/s-chained ÷ events/s-unchained; two logs in one process, one with the chain and one "+
		"without (records of format 1 or 2, as before the chain), each commit 64 one-event streams, fsync each; after 5 untimed "+
		"commits on each, rounds of 20 commits on one log then 20 on the other, which goes first alternating round by round, each "+
		"side timed over its own rounds (the disk's speed drifts between two processes; in one, its slow phases fall on both sides); "+
		"-benchtime %s; median of %d process(es); ratio = median of their ratios",
		chainAlt, chainTimeText(*benchtime), *count)
}

// chainTimeText is row 10a's -benchtime as its note tells it.
func chainTimeText(bt string) string {
	if t := chainTime(bt); t != bt {
		return t + " (twice -benchtime: both sides in one process)"
	}
	return bt + " (rounds of 20 commits a side)"
}

// openAt is the Open benchmark's s/open of the generated log of n events.
func openAt(n string) metric { return metric{openHistory + "/events=" + n, "s/open", 0} }

// historySpecs are row 14's rows (the long-history goals): 14c only with -historymax
// 10000000.
func historySpecs() []spec {
	openNote := openHistory + " (root): Open and Close of a store whose log holds generated events (internal/loggen: " +
		"5,000 keys updated in units of 100, read model at the head), default Options, after one untimed open; " +
		"mean of 3 opens; the logs are kept in HIKOUTEI_BENCH_LOGS when set (a second run reuses them)"
	flat := "; ratio = ÷ row 14a's 10^5 events (information: the goal's \"flat\")"
	rows := []spec{
		{"14a Open of a store whose log holds 10^5 events", openAt("100000"), metric{}, oursAtMost(1, " s"), "s", openNote},
		{"14b Open of a store whose log holds 10^6 events ÷ 10^5 events", openAt("1000000"), openAt("100000"),
			oursAtMost(1, " s"), "s", openNote + flat},
	}
	if *histMax >= 10_000_000 {
		rows = append(rows, spec{"14c Open of a store whose log holds 10^7 events ÷ 10^5 events", openAt("10000000"), openAt("100000"),
			oursAtMost(1, " s"), "s", openNote + flat + "; generating the 10^7 events takes over half an hour"})
	}
	return append(rows,
		spec{"14d commit rate after 10^6 events ÷ on an empty log (units of 100 updates, fsync on)",
			metric{commitAfter, "events/s-1e6", 0}, metric{commitAfter, "events/s-empty", 0}, ratioAtLeast(0.9), "events/s",
			commitAfter + " (root): 200 units on each store, in alternating rounds of 20, after 50 untimed units on each; " +
				"the 10^6-event log as row 14b's"},
		spec{"14e hot log.db while 10^6 updates stream in, retention window 100,000 records: size at 100 % ÷ at 25 %",
			metric{hotLog, "MiB-at-100%", 0}, metric{hotLog, "MiB-at-25%", 0}, ratioAtMost(1.1), "MiB",
			hotLog + " (root): Retention{KeepRecords: 100_000}, units of 100 updates, fsync on; goal \"flat\" read as ≤ 1.1"},
	)
}

// personalNote says how a row 13 measures.
func personalNote(bench, what string) string {
	return fmt.Sprintf("information, the cost of erasable personal fields (docs/erasure.md); %s (root, personal_bench_test.go): %s; "+
		"one entity with an email (plain, or tagged personal); plain and personal run back to back in one process; median of %d process(es)",
		bench, what, *count)
}

// freshNote says how row 12 measures.
func freshNote(what string) string {
	return fmt.Sprintf("%s ÷ %s (bench/freshness_test.go): %s; 10 entities × %d rows (HIKOUTEI_BENCH_FRESH_ROWS) synced first, "+
		"then %d s of 50 single-row commits a second and a person's edit every 2 s, serve's defaults (60 s poll), Google latency+quota "+
		"emulator in the child process; one process each; -freshrows=10000 measures the issue's 10 × 10,000 rows",
		freshHook, freshPoll, what, *freshRows, *freshSecs)
}

func backfillNote(r runs) string {
	return fmt.Sprintf("every request the emulator received for the spreadsheet, provisioning included: ours %s (%s rows/s), "+
		"raw values.batchUpdate in 2 MB bodies, tab creation included, %s (%s rows/s)",
		num(median(r.vals(backfillUs, "requests"))), num(median(r.vals(backfillUs, "rows/s"))),
		num(median(r.vals(backfillRw, "requests"))), num(median(r.vals(backfillRw, "rows/s"))))
}

// backfillRateNote says how row 5's rate measures.
func backfillRateNote() string {
	return fmt.Sprintf("%s (the store opened and provisioned, then every city committed in units and synced to the System tab through the safe path) ÷ %s "+
		"(raw values.batchUpdate in 2 MB bodies, no pacing, tab creation included); child processes each alone against an emulator with Google's model the runner serves; "+
		"median of %d pair(s)%s", backfillUs, backfillRw, *backfills, fewBackfills())
}

func serveNote() string {
	return fmt.Sprintf("%s (NotedCity: System and Input tabs; dispatcher tuned as row 5 but for serve's default batch of 10,000 effects, the poller, full scan, cleanup and "+
		"anti-entropy at serve's default cadences) ÷ %s (raw values.batchUpdate of a System-like and an Input-like tab, "+
		"2 MB bodies); HIKOUTEI_BENCH_BACKFILL_ROWS=%d (-serverows; 171075 = every city); child processes each alone "+
		"against an emulator the runner serves; %d pair(s)", backfillSv, backfillRb, *serveRows, *serves)
}

// fewBackfills explains a single backfill pair.
func fewBackfills() string {
	if *backfills >= 2 {
		return ""
	}
	return " (one pair: a second adds about 100 s idle to make bench's 15-minute budget on this 2-core machine)"
}

// idleGoal is the goal for an idle store: 1 % of a core (0.6 CPU-s
// a minute) at the 7,184 airports, 3 % at 171,075 rows.
func idleGoal(rows int) float64 {
	if rows <= 7184 {
		return 0.6
	}
	return 1.8
}

func idleNote(rows int) string {
	return fmt.Sprintf("%s: the process's CPU (user + system) over one idle minute's passes at the default cadences "+
		"(1 poll, 1 full scan and 1 cleanup on one grid read, 1 more cleanup, 2 reconciliations with anti-entropy, 60 dispatcher passes), "+
		"after one unmeasured minute; the serve process's own runtime (NATS, HTTP, heartbeat) is not in it; "+
		"the first %d cities synced to both tabs (HIKOUTEI_BENCH_INBOUND_ROWS) against an emulator without latency or quota (not timed), "+
		"then the store opened again with serve's provider (default pacing) against the same spreadsheet in an emulator with Google's "+
		"latency and quota model (bench.ModelSwitch, served by the runner: its CPU is not in the figure); median of 3 minutes, "+
		"%d process(es); baseline = %s, one raw values.batchGet of the same rows a minute (information)", idle, rows, *idles, rawIdle)
}
