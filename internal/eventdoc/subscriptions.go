package main

// subscribing is the section on reading the log inside the application:
// the root package's iterator and named subscriptions (docs/subscriptions.md
// has the API in full).
func subscribing() (heading, text string) {
	return "## Reading the log in process",
		"An application that embeds the store reads the same events, typed, without touching the log " +
			"file: `Store.Events(ctx, from)` iterates over the committed events from a sequence on, and " +
			"`Store.Subscribe(ctx, name, handler)` delivers every event after a named, durable checkpoint, " +
			"in order — the backlog first, then each commit as it lands — and resumes there after a " +
			"restart. Each is a `hikoutei.Event`: this page's envelope without `epoch` and `token`, with " +
			"the payload as the `events` type of its section. The checkpoint is kept in the read model's " +
			"database (table `hk_subscriptions`); delivery is at least once, and an event is delivered " +
			"again only when a crash came within `CheckpointEvery` events (default 100) after the last " +
			"recorded checkpoint. `Store.SubscribeTx` runs the handler in a transaction on that database " +
			"which commits the consumer's own tables with the checkpoint, so its state sees each event " +
			"exactly once. `hikoutei subscriptions` lists each subscription's checkpoint and lag."
}
