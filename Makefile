# Hikoutei for Go. Everything here needs only the Go toolchain (1.26+);
# modules come from the Go module proxy on first use.

GO        ?= go
PKGS      ?= ./...
# Failpoints (internal/failpoint) exist only in builds with this tag: the
# tests and the crash campaign use them; release builds never have them.
FAILPOINTS = -tags failpoints
FUZZTIME  ?= 30s
BENCHTIME ?= 1s
# Extra flags of the bench runner, e.g. BENCHFLAGS='-count 5 -backfills 2'.
BENCHFLAGS ?=

.PHONY: test test-steps lint bench fuzz tidy crash storage operator converge evolve demo

## demo: the whole product on the OpenFlights airports (see README).
demo:
	$(GO) run ./cmd/hikoutei demo

## test: vet (with and without failpoints), then every test with the race
## detector in a build with failpoints (the tests of examples/ build and
## run the example programs), then one race-free pass in a
## release build (no failpoints): the repro-12 tests again, the scale
## tests (built only without -race: the pure-Go SQLite is ~15x slower
## under it) and every case of the sweeps the race pass samples
## (sweep_test.go), followed by the browser tests (browsertest/, a module of its
## own so that the library's go.mod carries no browser driver; they need
## Chromium at /usr/bin/chromium) and the tracing test (tracingtest/, a
## module of its own so that the library's go.mod carries no OpenTelemetry
## SDK).
## Its last line is the time it took: wall seconds and the CPU seconds of
## every process it ran (the shell's `times`, so no tool is needed; run
## without a pipe or a subshell, which would see no children).
test:
	@t0=$$(date +%s); rc=0; $(MAKE) --no-print-directory test-steps || rc=$$?; \
	  wall=$$(( $$(date +%s) - t0 )); tf=$${TMPDIR:-/tmp}/hikoutei-make-test-times.$$$$; \
	  times > $$tf; \
	  awk -v wall=$$wall -v rc=$$rc 'function s(x, a, n) { sub(/s$$/, "", x); \
	    n = split(x, a, "m"); return n == 2 ? a[1] * 60 + a[2] : a[1] } \
	    NR == 2 { u = s($$1); y = s($$2); printf "make test: %s after %d s wall, %.0f s CPU (%.0f user + %.0f system)\n", \
	      rc == 0 ? "passed" : "FAILED", wall, u + y, u, y }' $$tf; \
	  rm -f $$tf; exit $$rc

# The release-build pass runs only the packages that hold its tests: over
# ./... it built and linked every package's test binary a third time
# (twice, when the repro-12 tests ran in a pass of their own) to run a
# dozen tests.
RELEASE_TESTS = ^TestRepro12_|^TestScale|^TestC09|^TestI27_ReadModelAndSnapshotCorruption|^TestAsOfEqualsARebuild
RELEASE_PKGS ?= $(sort $(dir $(shell grep -rlE --include='*_test.go' \
  'func (TestRepro12_|TestScale|TestC09)' . | grep -vE '^\./(bench|browsertest)/')))

# The steps of `make test` (run them through `make test`, which times them).
# After vet, the race pass, then the release pass and the browser tests,
# one after the other: run side by side they would load the machine under
# the race pass's tests that wait on real time.
test-steps:
	$(GO) vet $(PKGS)
	$(GO) vet $(FAILPOINTS) $(PKGS)
	$(MAKE) --no-print-directory cross-build
	cd browsertest && $(GO) vet ./...
	cd tracingtest && $(GO) vet ./...
	$(MAKE) --no-print-directory test-race test-release

# The library, the hikoutei command and the examples build for Windows and
# macOS too (file locks, open flags and the scratch sweep have a file per
# system); the lab's campaigns (internal/above/, hikoutei-lab) are Linux
# only (namespaces, fifos, SIGXFSZ). A build, not a test run: nothing here
# runs them on those systems.
CROSS_PKGS = $(shell $(GO) list $(PKGS) | grep -v -e /internal/above/ -e /cmd/hikoutei-lab)

.PHONY: test-race test-release cross-build
cross-build:
	@echo "GOOS=windows and GOOS=darwin: go build of the library, hikoutei and the examples"
	@GOOS=windows $(GO) build $(CROSS_PKGS)
	@GOOS=darwin $(GO) build $(CROSS_PKGS)

test-race:
	$(GO) test -race -count=1 -timeout 30m $(FAILPOINTS) $(PKGS)

test-release:
	$(GO) test -count=1 -run '$(RELEASE_TESTS)' $(RELEASE_PKGS)
	cd browsertest && $(GO) test -race -count=1 ./...
	cd tracingtest && $(GO) test -race -count=1 ./...

# staticcheck, pinned; `go run` fetches it through the module proxy on first use.
STATICCHECK = honnef.co/go/tools/cmd/staticcheck@v0.8.2

## lint: gofmt must have nothing to change, and go vet and staticcheck must
## be clean (with and without failpoints, and in the nested modules bench/,
## browsertest/ and tracingtest/).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) vet $(FAILPOINTS) $(PKGS)
	cd bench && $(GO) vet ./...
	cd browsertest && $(GO) vet ./...
	cd tracingtest && $(GO) vet ./...
	$(GO) run $(STATICCHECK) $(PKGS)
	$(GO) run $(STATICCHECK) $(FAILPOINTS) $(PKGS)
	cd bench && $(GO) run $(STATICCHECK) ./...
	cd browsertest && $(GO) run $(STATICCHECK) ./...
	cd tracingtest && $(GO) run $(STATICCHECK) ./...

## bench: the issue-19 table (Go benchmarks beside raw baselines, measured as
## interleaved repeats in the same run, + sync convergence); prints it with
## each step's time, its share of the run and the total, writes
## bench/results.json and bench/convergence.svg.
## Budget: 15 minutes for every step on an idle 2-core machine (measured
## 14 min 21 s on 2026-12-04 at load average 1-2, before the runner stopped
## linking a test binary per repeat and row 11b's setup was cut); the largest
## shares: row 11b 18 %, row 12 13 %, rows 14 12 %, row 5 12 %. Each step's
## share is in bench/README.md.
bench:
	$(GO) build -C bench -o $${TMPDIR:-/tmp}/hikoutei-benchtable ./cmd/benchtable
	$${TMPDIR:-/tmp}/hikoutei-benchtable -go $(GO) -benchtime $(BENCHTIME) $(BENCHFLAGS)

## fuzz: each fuzz target for FUZZTIME (default 30s; no test timeout, so
## FUZZTIME=10m works); crashers land in testdata/fuzz.
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -timeout 0 $$pkg; \
	  done; \
	done

## The campaigns are the hikoutei-lab command's (cmd/hikoutei-lab), not the
## product's: each target builds it into LAB_DIR (with failpoints for crash
## and storage; the operator campaign also builds hikoutei beside it, whose
## commands its acts run).
LAB_DIR ?= $${TMPDIR:-/tmp}/hikoutei-lab.d
LAB     = $(LAB_DIR)/hikoutei-lab
LAB_FP  = $(LAB_DIR)/hikoutei-lab-failpoints

## crash: the crash campaign (issue 10): CRASH_KILLS runs of a seeded mixed
## workload, each ended by SIGKILL at a random instant or a failpoint, the
## emulator's fault mix on every other run; then quiescence and checks.
## The workload includes conflict resolutions of both kinds (keep system,
## use sheet), a personal field and erasures of subjects, a retention policy
## that seals every few dozen records, and an offline compaction before
## every fifth open; after every kill the checks include I37 (erased stays
## erased; no plaintext personal value in any file but keys.db) and I38
## (every event in exactly one of log.db and the sealed segments; the chain
## verifies across them). The last line is "crash: runs=N lost=0 duplicates=0
## mismatches=0" followed by the resolution counts
## (resolved_keep_system=K resolved_use_sheet=U resolutions_unapplied=S)
## and the NATS event mirror every run writes to (I36): after quiescence
## its stream must hold every record up to the log's head and verify
## (mirror_head=H log_head=H; anything else is a mismatch).
## CRASH_SEGMENTS=bucket keeps the sealed segments in an object store (a
## gocloud.dev/blob file bucket beside the store, DIR.bucket) instead of
## DIR/segments: seals upload there, and the I38 check reads the bucket.
## The binary is built with failpoints (a release build refuses to run it).
CRASH_KILLS    ?= 200
CRASH_SEED     ?= 1
CRASH_SEGMENTS ?= folder
crash:
	$(GO) build $(FAILPOINTS) -o $(LAB_FP) ./cmd/hikoutei-lab
	$(LAB_FP) crash --kills $(CRASH_KILLS) --seed $(CRASH_SEED) --faults mixed --segments $(CRASH_SEGMENTS)

## storage: the storage fault campaign (issue 15): STORAGE_RUNS runs, the
## kinds taking turns — a small real filesystem filled up, one failing
## write (EIO/ENOSPC) at a durability boundary, a power cut tearing a
## commit's pages, bytes flipped in the log, the read model or a snapshot.
## The last line is "storage: runs=N acked_lost=0 panics=0 undetected_corruptions=0".
STORAGE_RUNS ?= 300
storage:
	$(GO) build $(FAILPOINTS) -o $(LAB_FP) ./cmd/hikoutei-lab
	$(LAB_FP) storage --runs $(STORAGE_RUNS) --seed $(CRASH_SEED)

## operator: the operator campaign (issue 29): OPERATOR_RUNS seeded runs,
## each one act of an operator's — backup, restore, salvage, replay or
## audit (also audit --at, audit verify) pointed at a path of one class:
## its own store, another store, a running store (a child process that
## commits all along), a file inside a store, a FIFO, /dev/zero, a
## symbolic link, or a fresh path; run to its end, or interrupted by
## SIGPIPE (its output closed after one line), SIGINT or kill -9; now and
## then the running store itself is killed with kill -9 (status and poll
## must say no process holds it). Checks: no acknowledged commit lost in
## any store (every 25 runs and at the end), no copy of a log or read
## model left in the command's TMPDIR or written into a store directory,
## every refusal a typed code, no panic. The last line is
## "operator: runs=N acked_lost=0 leaks=0 untyped=0 panics=0".
OPERATOR_RUNS ?= 300
operator:
	$(GO) build -o $(LAB_DIR)/hikoutei ./cmd/hikoutei
	$(GO) build -o $(LAB) ./cmd/hikoutei-lab
	$(LAB) operator --runs $(OPERATOR_RUNS) --seed $(CRASH_SEED)

## converge: the damage campaign (issue 16): CONVERGE_RUNS seeded runs, each a
## store syncing to the emulator over HTTP with its workers running, while a
## person deletes and clears tabs, deletes and edits rows, renames header
## cells, replaces the spreadsheet, and the store restarts or switches
## spreadsheet; after damage stops the sheet must equal canonical state
## within two reconciliation periods (plus a stated margin, and three passes), and the NATS
## event mirror each store writes to must hold every record up to the
## log's head and verify (I36). Parts carry a personal email and the
## application erases subjects (Store.Erase): the store and the System tab
## must show each live part's value, or ⟦erased⟧ once erased, no tab an
## erased value, and no file of the store but keys.db a personal value in
## plaintext (I37).
## The last line is "converge: runs=N diverged_after_quiescence=0 duplicates=0 lost=0 mirror_at_log_head=N/N personal_mismatches=0 plaintext_files=0".
CONVERGE_RUNS ?= 60
CONVERGE_SEED ?= 1
converge:
	$(GO) build -o $(LAB) ./cmd/hikoutei-lab
	$(LAB) converge --runs $(CONVERGE_RUNS) --seed $(CONVERGE_SEED)

## evolve: the evolution campaign (issue 28): EVOLVE_RUNS seeded runs, each a
## store syncing to the emulator over HTTP with its workers running, while
## the application commits, a person edits Input cells (conflicts open when
## the application changes the same field) and the store restarts with its
## entity changed along a graph of Go types: additive (a field, a user
## field, a second entity), compatible (a field dropped, made editable or
## no longer, reordered, renamed with was=, widened, an entity with no
## records removed) and incompatible ones (a narrowing retype, another
## primary key, an entity with records removed), which must be refused
## with the typed error and then pass with a migration. After the last act:
## no acknowledged commit lost, every edit accepted, in conflict,
## quarantined, kept in a retired column or on a row left for review (each
## counted), every tab equal to canonical state in the new layout within
## two reconciliation periods (plus a stated margin), health never ok while
## a tab differs, and a replay of the log equal to the live read model.
## The last line is "evolve: runs=N changes=C refused=R migrated=M
## lost_commits=0 lost_edits=0 accepted=A conflicts=K quarantined=Q
## retired=T review=V diverged_after_quiescence=0 health_ok_while_differs=0
## replay_mismatches=0 misclassified=0 duplicates=0".
EVOLVE_RUNS ?= 60
EVOLVE_SEED ?= 1
evolve:
	$(GO) build -o $(LAB) ./cmd/hikoutei-lab
	$(LAB) evolve --runs $(EVOLVE_RUNS) --seed $(EVOLVE_SEED)

## tidy: go mod tidy in the library's module and in the nested ones.
tidy:
	$(GO) mod tidy
	cd bench && $(GO) mod tidy
	cd browsertest && $(GO) mod tidy
	cd tracingtest && $(GO) mod tidy
