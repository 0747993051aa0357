package main

import (
	"fmt"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

func newEraseCmd() *cobra.Command {
	var dir, subject string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "erase --dir DIR --subject S [--json]",
		Short: "Erase a data subject's personal values from a closed store for good",
		Long: `erase makes every personal field value of the data subject S unreadable for
good (docs/erasure.md): it commits one ` + string(events.TypeSubjectErased) + ` event naming the
subject by its keyed digest (never in clear; actor "cli"), then destroys the
subject's key by rewriting DIR/keys.db without it. No logged byte changes, so
the chain still verifies; every reader (Get, Find, AsOf, audit, Events,
subscriptions, replay) sees the erased marker in place of those values from
then on, including in a backup taken before. S is the primary key of the
records the subject owns, or their subject field's value. It needs the store
closed (it takes the writer lease) and uses no network. What the store cannot
reach (the spreadsheet's version history, copies people made, old copies of
keys.db) is listed in docs/erasure.md.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			if subject == "" {
				return usageError{fmt.Errorf("give --subject")}
			}
			s, err := hikoutei.OpenDeclared(cmd.Context(), dir, hikoutei.Options{Operation: "erase", NoAdmin: true})
			if err != nil {
				return err
			}
			er, err := s.Erase(cmd.Context(), subject, hikoutei.ErasedBy(hikoutei.ActorCLI))
			if cerr := s.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			return printErase(cmd, er, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&subject, "subject", "", "the data subject: the primary key of their records, or their subject field's value")
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

// eraseJSON is what `erase --json` prints.
type eraseJSON struct {
	Subject    string `json:"subject"`
	Generation uint64 `json:"generation"`
	Seq        uint64 `json:"seq"`
	// InClear is Erasure.InClear: the subject's personal values in the
	// log in clear (written before their field was personal), -1 when
	// not counted (this command opens the store without Go types).
	InClear int `json:"in_clear"`
}

func printErase(cmd *cobra.Command, e hikoutei.Erasure, asJSON bool) error {
	if asJSON {
		return printJSON(cmd.OutOrStdout(), eraseJSON{Subject: e.Subject, Generation: e.Generation, Seq: e.Seq, InClear: e.InClear})
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "erased subject %s (key generation %d destroyed); %s at seq %d\n",
		e.Subject, e.Generation, events.TypeSubjectErased, e.Seq)
	if err == nil && e.InClear != 0 {
		_, err = fmt.Fprintln(cmd.OutOrStdout(), inClearNote)
	}
	return err
}

// inClearNote is what erase prints after an erasure it cannot tell
// complete: this command does not know which records a subject owns.
const inClearNote = `note: values in clear not checked: a personal field's values written before the
field was marked personal are in the log in clear, and no erasure reaches them; the
application's Store.Erase counts them (Erasure.InClear) (docs/erasure.md)`
