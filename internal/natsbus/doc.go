// Package natsbus is the store's NATS layer (docs/nats.md).
//
// Start runs an embedded nats-server in-process (no port unless
// Config.Listen asks for one; started through Config.Server, which package
// natsserver provides: this package does not import nats-server, so a
// program that never embeds a server does not link it) and connects to it
// through an in-memory pipe,
// or connects to an existing server or cluster at Config.URL (the store
// passes HIKOUTEI_NATS_URL) with optional creds, nkey and TLS files. A
// listener requires nkey authentication (Config.ListenAuth: a generated
// seed file or operator-supplied keys; none only on loopback) and gives
// its clients read-only rights plus wake-up hints; the store's own
// connection stays in-process.
//
// Subjects, all under "hikoutei.<store>.":
//
//	wake.dispatch      empty body; hint: the dispatcher has work (WakeDispatch)
//	wake.poll          empty body; hint: the pollers should poll (WakePoll)
//	conflict.opened    JSON ConflictNotification, schema 1
//	conflict.resolved  JSON ConflictNotification, schema 1
//	chain.head         JSON ChainHeadNotification, schema 1: the log's hash
//	                   chain head after each commit batch
//	events             optional JetStream mirror of committed events
//	                   (MirrorRecord: the record without the fencing
//	                   token; headers Nats-Msg-Id = log seq,
//	                   Hikoutei-Signer, Hikoutei-Sig, Hikoutei-Chain), stream
//	                   "HIKOUTEI_<STORE>"; readers verify checksum,
//	                   signature and sequence chain
//
// Wake-ups are hints: they are coalesced (any number of WakeDispatch calls
// become at most one message per Config.WakeInterval), dropped while NATS is
// unreachable, and workers keep their timers, so correctness never depends
// on a message arriving. Nothing a commit calls (Wake*, PublishConflict*)
// waits on the network or returns a network error; Stats counts what was
// dropped. Mirror waits for JetStream acknowledgements (bounded by
// Config.Mirror.Timeout) and belongs off the commit path.
package natsbus
