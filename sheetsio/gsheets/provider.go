// Package gsheets is the Google Sheets client of hikoutei: the
// sheetsio.Client over google.golang.org/api/sheets/v4 (construction and
// startup diagnostics, provisioning of the fixed tab layout, the
// per-spreadsheet dispatch of guarded row operations, pacing, read retries
// and write outcome classification). It is the only package that links the
// Google API client: a program that never syncs never imports it.
//
// Stability: this is one of the engine's packages. Its Go API carries no
// stability promise (docs/stability.md): a release may change it.
// Applications use the root package (and gsync, observe, natsserver,
// hikouteitest), which do.
package gsheets

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/ratelimit"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"
	htransport "google.golang.org/api/transport/http"
)

// A Provider is the sheetsio.Client over the Google Sheets API.
var _ sheetsio.Client = (*Provider)(nil)

// Provider talks to Google Sheets for any number of spreadsheets. It is safe
// for concurrent use; all users of one Provider share its pacing budgets:
// one read and one write budget per account of its pool (Google's quota is
// per user), each request taking the account with the most headroom.
type Provider struct {
	cfg     Config
	base    string      // the API root, with a trailing slash
	pool    *pool       // account 0 (the default credentials), then Config.Pool
	failure lastFailure // the newest API call's failure (LastFailure)
	hooks   hooks       // the observer, and the logger a store lent (Adopt)
}

// New builds a Provider from cfg (see Config). Errors (*Error):
// CodeCredentialsMissing when neither Endpoint nor CredentialsFile is set or
// the file is missing; CodeCredentialsNotJSON / CodeCredentialsIncomplete for
// a bad credentials file; CodeInvalidConfig when the client cannot be built
// or two accounts are one service account (the same client_email).
// An account of Config.Pool fails the same way, its message naming its
// index. New performs no network call; use Check for startup diagnostics.
func New(ctx context.Context, cfg Config) (*Provider, error) {
	cfg = cfg.withDefaults()
	pl := &pool{readmit: cfg.Readmit}
	for i, acc := range append([]Account{{CredentialsFile: cfg.CredentialsFile, HTTPClient: cfg.HTTPClient}}, cfg.Pool...) {
		a, err := newAccount(ctx, cfg, acc)
		if err != nil {
			if i > 0 {
				err.Msg = fmt.Sprintf("pool account %d: %s", i, err.Msg)
			}
			return nil, err
		}
		if j := sameAccount(pl.accts, a.email); j >= 0 {
			return nil, newErr(sheetsio.CodeInvalidConfig, nil,
				"pool account %d is the service account of account %d: its quota would be counted twice", i, j)
		}
		a.index = i
		pl.accts = append(pl.accts, a)
	}
	return &Provider{cfg: cfg, base: baseURL(cfg), pool: pl}, nil
}

// sameAccount is the index of the account of accts whose e-mail is email
// (-1: none, or no e-mail, an emulator's caller).
func sameAccount(accts []*account, email string) int {
	for _, a := range accts {
		if email != "" && a.email == email {
			return a.index
		}
	}
	return -1
}

// newAccount builds one account's clients and budgets.
func newAccount(ctx context.Context, cfg Config, acc Account) (*account, *sheetsio.Error) {
	cfg.CredentialsFile, cfg.HTTPClient = acc.CredentialsFile, acc.HTTPClient
	opts, email, err := clientOptions(cfg)
	if err != nil {
		return nil, err
	}
	svc, serr := sheets.NewService(ctx, opts...)
	if serr != nil {
		return nil, newErr(sheetsio.CodeInvalidConfig, nil, "cannot build the Sheets client")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		if hc, _, serr = htransport.NewClient(ctx, opts...); serr != nil {
			return nil, newErr(sheetsio.CodeInvalidConfig, nil, "cannot build the Sheets HTTP client")
		}
	}
	read := newBudget(cfg.Pacing.ReadInterval, cfg.Pacing.Burst, cfg.Now)
	read.SetReserve(cfg.Pacing.ReadReserve)
	read.SetSpacing(backgroundSpacing * cfg.Pacing.ReadInterval)
	return &account{email: email, svc: svc, hc: hc, read: read,
		write: newBudget(cfg.Pacing.WriteInterval, cfg.Pacing.Burst, cfg.Now)}, nil
}

// newBudget is the budget of one request class paced every interval:
// its burst on top, but never more starts in a minute (and a margin for
// the requests' travel) than a minute of the interval holds, Google's
// per-minute quota (ratelimit.WindowDelay).
func newBudget(every time.Duration, burst int, now func() time.Time) *ratelimit.Budget {
	b := ratelimit.NewBudget(every, burst, now)
	if every > 0 {
		b.SetWindow(int(time.Minute/every), time.Minute+quotaMargin)
	}
	return b
}

// clientOptions builds the client options. The SDK's own logger is always
// discarded: with GOOGLE_SDK_GO_LOGGING_LEVEL set it would dump request
// URLs and bodies (spreadsheet ids, cell payloads). Its OpenTelemetry
// instrumentation is off for the same reason: its HTTP spans, children
// of the store's dispatch and poll spans, would carry the request URL.
func clientOptions(cfg Config) ([]option.ClientOption, string, *sheetsio.Error) {
	opts := []option.ClientOption{option.WithLogger(slog.New(slog.DiscardHandler)), option.WithTelemetryDisabled()}
	if cfg.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(strings.TrimSuffix(cfg.Endpoint, "/")+"/"))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	if cfg.CredentialsFile == "" {
		if cfg.Endpoint == "" {
			return nil, "", newErr(sheetsio.CodeCredentialsMissing, nil, "configure a service-account credentials file (or an emulator endpoint)")
		}
		return append(opts, option.WithoutAuthentication()), "", nil
	}
	sa, err := loadServiceAccount(cfg.CredentialsFile)
	if err != nil {
		return nil, "", err
	}
	if cfg.HTTPClient == nil {
		opts = append(opts, option.WithAuthCredentialsJSON(option.ServiceAccount, sa.JSON), option.WithScopes(sheets.SpreadsheetsScope))
	}
	return opts, sa.ClientEmail, nil
}

// ServiceAccountEmail returns the client_email of the configured service
// account, account 0 of a pool ("" for an unauthenticated endpoint): the
// address people must share the spreadsheet with (each account's, for a
// pool).
func (p *Provider) ServiceAccountEmail() string { return p.pool.accts[0].email }

// Check verifies that the spreadsheet is reachable and readable: one paced,
// retried spreadsheets.get with a minimal fields mask. Errors (*Error):
// CodeCredentialsRejected (401), CodePermissionDenied (403; the message names the service-account e-mail
// to share the sheet with), CodeSpreadsheetNotFound (404), CodeReadRejected
// (other 4xx), CodeReadUnavailable (retries exhausted or ctx done).
func (p *Provider) Check(ctx context.Context, spreadsheetID string) error {
	return p.read(ctx, "check", func(ctx context.Context) error {
		_, err := p.svcOf(ctx).Spreadsheets.Get(spreadsheetID).Fields("spreadsheetId").Context(ctx).Do()
		return err
	})
}

// Pacing is the request pacing the provider runs with (defaults applied).
func (p *Provider) Pacing() Pacing { return p.cfg.Pacing }
