package main

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/events"
)

// chainSection is the "The hash chain" section of docs/events.md: how the
// chain is computed and how an auditor verifies a log and a NATS stream.
func chainSection() []string {
	return []string{
		"## The hash chain",
		"Every record this build appends carries a **link**: the SHA-256 chain value of the records before it. " +
			"Such a record is of record format 3: the byte `3`, the 32-byte link, then a record of format 1 or 2 " +
			"(below), then the xxhash64 checksum of everything before it. The chain runs over the log in sequence order:",
		"```\n" +
			"c(0) = SHA-256(\"hikoutei-chain-v1\\n\" ‖ store id)      the genesis value\n" +
			"c(n) = SHA-256(c(n-1) ‖ chain form of record n)\n" +
			"record n carries c(n-1); the head hash is c(head)\n" +
			"```",
		"A record of format 1 is the byte `1`, then uvarint `seq`, `version`, `schema`, `epoch`, the zigzag varint " +
			"`at` (Unix nanoseconds), then `stream`, `type`, `token`, `commit` and the canonical payload, each a uvarint " +
			"length and its bytes. Format 2 is the same with a hex `token` stored as the bytes it spells. The **chain form** " +
			"of a record is its bytes as stored after that format byte, without the `token` field (length and bytes) and " +
			"without the checksum: the token never leaves the store, a standby and the NATS mirror hold each record " +
			"without it, and their chain is the primary's. The store id is in the log's `meta` bucket (`store_id`).",
		"Changing, removing or reordering a record changes the chain value of every later record, so the link of the " +
			"record after it no longer matches. The xxhash64 checksum stays what it was, a check against torn writes and " +
			"bit rot: whoever edits a record can recompute it, but not the links after it, and not a head someone else kept.",
		"### Logs written before the chain",
		"A log written by an older build (log format 1 or 2) reads and verifies as it is: its records carry no link, " +
			"and its head hash covers them all. The first time this build opens it for writing, it marks the log format 3 " +
			"(an older build then refuses the file by its format) and the first record it appends links to the chain value " +
			"over the genesis value and every older record. From then on a change to an older record is found at that first " +
			"linked record: older records carry no link of their own that could name the exact one. A head kept before the " +
			"upgrade pins them exactly.",
		"### Verifying a log",
		fmt.Sprintf("`hikoutei audit verify --dir D [--pin SEQ:HASH]` (or `Store.Verify`, `hikoutei.VerifyDir`, "+
			"`events.Log.VerifyChain`) recomputes the chain from the genesis value, checks every record's checksum and "+
			"every link, and prints the head `SEQ:HASH`. The first record that is not what the chain committed to fails "+
			"with `%s` naming its sequence: a changed record is named itself (the next record's link, which still agrees "+
			"with the chain after it, shows that the change is in the record before), a missing record by its sequence, a "+
			"moved or swapped record where the first one sits. With `--pin SEQ:HASH` the chain value at SEQ must still "+
			"be HASH, else `%s`: a rewrite of any record up to SEQ fails it, even one that re-links every later record. "+
			"The last record is covered by the head hash only: keep a recent head.",
			events.ErrChainBroken, events.ErrChainPinMismatch),
		"An auditor who trusts none of this code can verify a copy of `log.db` with any bbolt reader and SHA-256: " +
			"`examples/verifylog` does it in about a hundred lines, from the layout above alone, and prints the same head " +
			"(see \"Verifying a log and a stream independently\" below).",
		"### What opening a store checks",
		fmt.Sprintf("Opening a store for writing checks the file's structure (meta pages, file size, freelist, bucket roots, "+
			"the head against the last record) and walks the chain, but only over the records appended after the log's "+
			"**chain checkpoint**: the last record a complete walk verified, with the chain value after it. A walk that "+
			"passes (at open, `Store.Verify`, and every 100,000 records a running store appends, beside the writer) records "+
			"a new checkpoint in the `meta` bucket of `log.db` (key `chain_verified`: the sequence, the chain value, where "+
			"the walk began and how many records it read), so an open costs what was appended since, not the whole "+
			"history. The checkpoint is trusted only while the log vouches for it: the record at its sequence is there, "+
			"passes its checksum, carries a link, and the chain value after it is the checkpoint's. Otherwise the open walks "+
			"the whole chain and records a checkpoint once the walk passes: a log of an earlier build, which has none, and "+
			"a checkpoint the log does not vouch for (changed, or an older `log.db` restored under it), which is logged "+
			"at WARN with the reason. Damage found by these walks "+
			"refuses commits (`log_damaged`). A record changed at or before the checkpoint is not read at open: "+
			"`audit verify` and `doctor` walk the whole chain from the genesis value whatever the checkpoint says, and "+
			"find it (`%s` naming its sequence); run them, or keep pinned heads, to audit the history itself.",
			events.ErrChainBroken),
		"### Sealed segments",
		fmt.Sprintf("`hikoutei seal` (`Store.Seal`) moves older records out of `log.db` into a **sealed segment**: a "+
			"zstd-compressed, read-only file in the store's `segments` folder holding the records byte for byte as "+
			"`log.db` stored them (a replicated store's: without the fencing token, as every standby holds them, so "+
			"each standby builds the same file when it applies the seal), so the chain runs through it unchanged. The file is named by its first and last "+
			"sequences and the first 16 hex digits of the chain values before and after it, written (mode `0600`), synced, "+
			"read back and checked (every record, the chain) before the log vouches for it: a `%s` event with its name, "+
			"range, chain values and SHA-256, committed in the transaction that removes its records from `log.db` and "+
			"adds it to the segment list in the `meta` bucket (key `segments`). So every record is in exactly one place; a "+
			"crash before that commit leaves the records in `log.db` and a file nothing vouches for, which readers "+
			"ignore, verification lists as stray and the next seal of the same records replaces. The records of the "+
			"streams a store reads when it opens (`%s`, `%s`, `%s`, `%s`) stay in `log.db`. Opening a store never reads "+
			"a segment: its walk starts after the last one, from the chain value its seal recorded, which the next "+
			"record's link must be. Reads of old events (`Store.Events`, subscriptions, replay, `AsOf`, `audit`) and the "+
			"walk from the genesis value (`audit verify`, `doctor`, `Store.Verify`) read through the segments: a "+
			"segment that is not there is `%s`, one whose digest, records or chain differ `%s`, each naming the file. A "+
			"pin taken before a seal still verifies.",
			events.TypeSegmentSealed, events.SchemaStream, events.SnapshotStream, events.IntegrityStream, events.SegmentStream,
			events.ErrSegmentMissing, events.ErrSegmentDamaged),
		"### Salvage holes",
		fmt.Sprintf("A salvage (`hikoutei salvage`) copies every record it recovers byte for byte and records the sequences it lost "+
			"(meta `salvage_lost`). The chain cannot run through such a hole: the walk takes it up again from the link of the "+
			"first linked record after it and lists the hole (`salvage hole: seq 60-61 lost; the chain restarts at seq 62`). "+
			"Links before and after the hole each verify, but no link ties the records after the hole to the ones before, and "+
			"the `salvage_lost` value is protected by nothing: someone who removes a record, records it as lost and re-links "+
			"every later record would pass. So verification **fails by default** when the chain restarts: `%s`, "+
			"`*events.ChainRestartedError` naming the first hole and the seq the chain restarts at, exit 3 from `audit verify`, "+
			"with the report of everything walked still printed. `audit verify --accept-salvage-holes` "+
			"(`VerifyOptions.AcceptSalvageHoles`, `ChainVerifyOptions.AcceptSalvageHoles`) accepts holes and exits 0, still "+
			"printing each one. An accepted log gap (`AcceptLogGap`) leaves the same kind of hole: the sequences the log "+
			"lost are recorded in `salvage_lost` and never reused, numbering goes on after the highest one ever handed out. "+
			"A pin taken before a hole never vouches for the log after it: the hole's records are gone, yet the record "+
			"after it still links to them, so the chain values after the hole equal the old ones, and an old pin would "+
			"match. When a store opens and finds holes no record of its log names, it appends `%s` naming them; "+
			"verification lets a head pinned at or after that record vouch across them and fails any other pin with `%s` "+
			"naming the hole (`the pin predates salvage hole 403`): a pin from before the hole, a pin inside it, and a pin "+
			"after a hole nothing recorded (a record deleted and named in `salvage_lost` while no store ran). So what vouches "+
			"for the records after the last hole is a head pinned after the store recorded it that the log still extends "+
			"(`--pin SEQ:HASH` with `--accept-salvage-holes`): pin a head as soon as a salvaged store runs. "+
			"`hikoutei doctor` walks the chain too: a broken link is a `%s` failure (exit 3), a restart a `%s` warning "+
			"that says where each hole was recorded; a log with holes is not healthy: doctor ends with `doctor: holes found` "+
			"and exits 5 (the store works; audits need the opt-in and a pin taken after the hole was recorded).",
			events.ErrChainRestarted, events.TypeHolesRecorded, events.ErrChainPinMismatch, events.ErrChainBroken, events.ErrChainRestarted),
		"A restored backup, a standby of a replicated store (seeded " +
			"from the log and following the replicated stream) and a store restored from that stream hold the same " +
			"record bytes but the token, so the same chain and head.",
		"### The head in the spreadsheet",
		"With sync on, each dispatch publishes the store's head in the spreadsheet's hidden `_hikoutei_authority` tab: " +
			"its `chain_head` column (cell E2, after the writer's store id, epoch, token and `updated_at`) holds " +
			"`SEQ:HASH`, the text `audit verify --pin` reads, so anyone who can open the spreadsheet can copy a head to " +
			"pin. The head is sampled from the log just before the dispatch and rides in the dispatch's own batchUpdate " +
			"as one more cell update (no request of its own; a dispatch with nothing else to write leaves it for the " +
			"next). The cell is written whenever it does not show exactly the head: the dispatch's preflight read shows " +
			"what it holds (a blind append, which reads nothing, compares with what its client last read or wrote), and " +
			"whatever a person typed there, blank, an older head, or a `SEQ:HASH` past the log's head, is no head of the " +
			"log and is rewritten by the next dispatch, never frozen. A cell past the log's head that a dispatch reads is " +
			"reported: sync health " +
			"carries the warning `chain_head_ahead` (in `/healthz` under `sync_health.warnings`; " +
			"sync does not fail for it) for an hour after the last dispatch that found one. It never moves back below a head its " +
			"writer wrote: one dispatcher sends one dispatch at a time, sampling a log that only grows. The " +
			"head is written only under the writer's fence, by the writer the authority names; the fence reads the four " +
			"cells before it and never this one. " +
			"Settling a dispatch commits events, so the head on the sheet trails the log by the last settlement: it " +
			"still verifies as a pin, as every earlier head does.",
		"### Publishing and verifying the head on NATS",
		"With NATS, after each commit batch the store publishes its head on `hikoutei.<store>.chain.head`: " +
			"`{\"schema\":1,\"store\":\"demo\",\"seq\":1234,\"hash\":\"<64 hex digits>\"}`. A third party keeps such heads " +
			"and later checks one with `audit verify --pin`. The event mirror (`hikoutei.<store>.events`) carries each " +
			"record with its link, signed, and the header `Hikoutei-Chain` with the record's own chain value c(seq). A " +
			"subscriber verifies a stream independently: for each message in sequence, the record's link must equal the " +
			"previous record's chain value, and SHA-256(link ‖ chain form) must equal the header; the last value must " +
			"equal a published or pinned head at that sequence. `events.ChainNext` and `events.RecordChainValue` compute " +
			"it; `hikoutei audit --nats` and `natsbus.ReadMirror` check it, and fail with `" + events.ErrChainBroken.Error() +
			"` naming the message. A record written before the chain (no link) is mirrored as it was; the check takes the " +
			"chain up again at the next linked record.",
		"### Verifying a log and a stream independently",
		"An auditor checks each copy on its own, with a short program that uses no Hikoutei package:",
		"- **The log file**: `go run ./examples/verifylog -log log.db [-pin SEQ:HASH] [-accept-salvage-holes]` opens a copy " +
			"of `log.db` (read-only, with bbolt), checks every record's checksum and link from the genesis value of the store " +
			"id in the `meta` bucket, and prints `verified N records` and `head SEQ:HASH`. It refuses a salvage hole unless " +
			"`-accept-salvage-holes` is given, then prints each hole and restarts the chain as `audit verify` does.",
		"- **The NATS stream**: `go run ./examples/verifystream -nats URL [-nkey nats-client.nk] -stream HIKOUTEI_<STORE> " +
			"[-store ID] [-key N…] [-pin SEQ:HASH]` reads the store's JetStream mirror with nats.go (an ordered " +
			"consumer over every message the stream holds when it starts) and, for each message in order, checks the " +
			"record's checksum, that its sequence follows the previous record's, that its link is the previous record's " +
			"chain value, that SHA-256(link ‖ chain form) is its `Hikoutei-Chain` header, and its Ed25519 signature " +
			"(`Hikoutei-Sig` over `hikoutei-mirror-v1\\n` and the record, by the `Hikoutei-Signer` key, checked with " +
			"nkeys; `-key` pins the key, else the first record's is taken). With `-store` a stream that starts at seq 1 is " +
			"checked from the genesis value; without it the first record's link is taken as given. It prints the same " +
			"two lines; a pin the stream does not extend, or the first message that does not hold, exits 1 naming it.",
		"Both print the head the store itself reports (`audit verify`, `Store.Verify`), so the two copies and a head " +
			"kept from `chain.head` or the spreadsheet's `chain_head` cell can be compared line for line. `make test` " +
			"builds and runs both (examples/examples_test.go, examples/verifystream_test.go; the stream against a real " +
			"NATS server with JetStream, including a record forged into the stream with its checksum recomputed).",
	}
}
