package sheetsio

import (
	"log/slog"
	"time"
)

// StatusClass is how one Sheets API request ended, for metrics: the
// HTTP status class of the answer, 429 apart, or timeout / network when
// no answer came.
type StatusClass string

// Status classes.
const (
	Status2xx     StatusClass = "2xx"
	Status4xx     StatusClass = "4xx"
	Status5xx     StatusClass = "5xx"
	Status429     StatusClass = "429"
	StatusTimeout StatusClass = "timeout" // no answer within the attempt's deadline
	StatusNetwork StatusClass = "network" // no answer: refused or lost connection
)

// Methods lists the provider's request methods, the method an Observer
// hears: reads check, enumerate, batch_get, batch_get_by_sheet_id,
// grid_get, grid_get_by_sheet_id; writes provision, batch_update.
var Methods = []string{"check", "enumerate", "batch_get", "batch_get_by_sheet_id", "grid_get", "grid_get_by_sheet_id",
	"provision", "batch_update"}

// Observer hears of every HTTP request the provider makes (package
// observe turns them into Prometheus series). Calls must be cheap and
// must not block: they run on the request path.
type Observer interface {
	// SheetsRequest: one attempt of method ended with status after d.
	SheetsRequest(method string, status StatusClass, d time.Duration)
	// SheetsRetry: a failed read of method will be retried after wait.
	SheetsRetry(method string, wait time.Duration)
}

// Hooks are what a store lends a provider built without them (see Adopt).
type Hooks struct {
	Logger   *slog.Logger
	Observer Observer
}
