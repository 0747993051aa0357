package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are the Examples: of each command's help, by command path
// (below "hikoutei"). Every line parses as the command it documents (a
// test checks it); a command that sets its own Example keeps it.
var examples = map[string]string{
	"": `hikoutei demo --keep-open
hikoutei serve --dir /var/lib/hikoutei/store --spreadsheet "$SHEET_URL" --credentials key.json
hikoutei status --dir /var/lib/hikoutei/store
hikoutei doctor --dir /var/lib/hikoutei/store`,
	"version": `hikoutei version
hikoutei version --json`,
	"demo": `hikoutei demo
hikoutei demo --rows 500 --no-latency
hikoutei demo --keep-open --dir ./demo-store`,
	"serve": `hikoutei serve --dir ./store --spreadsheet "$SHEET_URL" --credentials ./key.json
hikoutei serve --dir ./store --spreadsheet "$SHEET_URL" --http 127.0.0.1:9090
hikoutei serve --dir ./store --sheets-endpoint http://127.0.0.1:8787/ --spreadsheet demo-sheet`,
	"status": `hikoutei status --dir ./store
hikoutei status --dir ./store --json`,
	"seal": `hikoutei seal --dir ./store --keep 1000000
hikoutei seal --dir ./store --below 500000 --json`,
	"erase": `hikoutei erase --dir ./store --subject customer-1042
hikoutei erase --dir ./store --subject customer-1042 --json`,
	"compact": `hikoutei compact --dir ./store
hikoutei compact --dir ./store --json`,
	"setaside": `hikoutei setaside --dir ./store
hikoutei setaside --dir ./store --older-than 720h
hikoutei setaside --dir ./store --older-than 720h --delete --json
hikoutei setaside --dir ./store --copy read.sqlite.unusable-20261205T070643.001495465Z --delete`,
	"doctor": `hikoutei doctor --dir ./store
hikoutei doctor --dir ./store --json --progress`,
	"conflicts": `hikoutei conflicts list --dir ./store
hikoutei conflicts show --dir ./store CONFLICT_ID`,
	"conflicts list": `hikoutei conflicts list --dir ./store
hikoutei conflicts list --dir ./store --state all --json`,
	"conflicts show": `hikoutei conflicts show --dir ./store CONFLICT_ID
hikoutei conflicts show --dir ./store CONFLICT_ID --json`,
	"conflicts ack": `hikoutei conflicts ack --dir ./store CONFLICT_ID 3 CANDIDATE_HASH 1`,
	"conflicts resolve": `hikoutei conflicts resolve --dir ./store CONFLICT_ID --use-sheet
hikoutei conflicts resolve --dir ./store CONFLICT_ID --keep-system --command-id fix-42`,
	"outbox": `hikoutei outbox list --dir ./store --state failed
hikoutei outbox show --dir ./store EFFECT_ID`,
	"outbox list": `hikoutei outbox list --dir ./store
hikoutei outbox list --dir ./store --state failed --state delivery_uncertain --reason sheet_header_drift`,
	"outbox show": `hikoutei outbox show --dir ./store EFFECT_ID
hikoutei outbox show --dir ./store EFFECT_ID --values --json`,
	"quarantine": `hikoutei quarantine list --dir ./store
hikoutei quarantine show --dir ./store QUARANTINE_ID`,
	"quarantine list": `hikoutei quarantine list --dir ./store
hikoutei quarantine list --dir ./store --all --reason row_deleted --tab Airport_Input`,
	"quarantine show":    `hikoutei quarantine show --dir ./store QUARANTINE_ID`,
	"quarantine dismiss": `hikoutei quarantine dismiss --dir ./store QUARANTINE_ID`,
	"replay": `hikoutei replay --dir ./store
hikoutei replay --dir ./store --to 1200 --out /tmp/read-at-1200.sqlite`,
	"audit": `hikoutei audit --dir ./store --entity Airport --id LHR
hikoutei audit --dir ./store --from 100 --to 200 --json
hikoutei audit --dir ./store --entity Airport --id LHR --at 2026-12-01T09:00:00Z`,
	"audit verify": `hikoutei audit verify --dir ./store
hikoutei audit verify --dir ./store --pin 1200:HASH`,
	"poll": `hikoutei poll --dir ./store
hikoutei poll --store mystore --nats nats://127.0.0.1:4222`,
	"salvage": `hikoutei salvage --from ./store --to ./store-salvaged
hikoutei salvage --from ./store --to ./store-salvaged --head 1200 --json`,
	"ping": `hikoutei ping --dir ./store
hikoutei ping --dir ./store --json`,
	"backup": `hikoutei backup --dir ./store --out ./backups/log.db
hikoutei backup --dir ./store --out ./backups/log.db --force --json`,
	"restore": `hikoutei restore --from ./backups/log.db --to ./store-restored
hikoutei restore --store mystore --nats nats://127.0.0.1:4222 --to ./store-restored`,
	"subscriptions": `hikoutei subscriptions --dir ./store
hikoutei subscriptions --dir ./store --json`,
	"schema": `hikoutei schema --dir ./store
hikoutei schema --dir ./store --json > shapes.json`,
	"migrate": `hikoutei migrate --dir ./store --dry-run --shapes shapes.json`,
}

// addExamples sets the Example of every command of the tree below cmd
// from examples (indented as cobra's help shows them).
func addExamples(cmd *cobra.Command) {
	path := strings.TrimPrefix(strings.TrimPrefix(cmd.CommandPath(), "hikoutei"), " ")
	if ex, ok := examples[path]; ok && cmd.Example == "" {
		cmd.Example = "  " + strings.ReplaceAll(ex, "\n", "\n  ")
	}
	for _, c := range cmd.Commands() {
		addExamples(c)
	}
}
