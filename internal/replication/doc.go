// Package replication is the foundation of replicated mode
// (docs/invariants.md "More than one host", I31): a store's commits on an
// R3 JetStream stream with storage-level fencing, and the writer lease in
// an R3 JetStream KV bucket.
//
// Log: one stream per store (StreamName, Subject). Each commit is ONE
// message carrying all its records (EncodeCommit), so a commit is atomic
// on the stream without the atomic batch protocol. Append publishes it
// with Nats-Expected-Last-Sequence = the writer's view of the head, so a
// writer that is not at the head (a deposed primary) is rejected by the
// server (ErrFenced), and with Nats-Msg-Id = MsgID(position, content) as
// the idempotency key, so retrying an uncertain Append (ErrUnavailable)
// with the same arguments is safe: it lands once, and the retry reports
// where. The stream sequence of a commit is its commit number.
//
// Follow / ReadFrom deliver commits in stream order, each with its
// sequence, to a standby or an auditor, through an ordered consumer that
// survives node restarts.
//
// Lease: the writer lease per store in the KV bucket LeaseBucket, changed
// only by compare-and-set on the key's revision. The rules are the
// seed's (I02, I03): Decide is the pure decision, LeaseStore applies it.
//
// Durability: the servers must run JetStream with sync_interval: always
// (server.Options.SyncAlways); Jepsen's analysis of NATS 2.12.1 found
// acknowledged writes lost with the default fsync interval. The test
// harness in replicationtest does so.
package replication
