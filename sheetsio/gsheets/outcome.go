package gsheets

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"google.golang.org/api/googleapi"
)

// ClassifyWrite turns the error of a write call into a *WriteError; nil
// stays nil (Applied). Only a structured JSON 4xx other than 404/408/429 is
// Terminal (413 and size-related 400s get Code WritePayloadTooLarge), but
// a 400 refusing to grow the spreadsheet past its cells is NotSent with
// Code CodeSpreadsheetCapacity;
// everything else is Uncertain.
func ClassifyWrite(err error) *sheetsio.WriteError {
	if err == nil {
		return nil
	}
	err = httpError(err)
	if credentialsRejected(err) { // refused before the request was carried out
		return &sheetsio.WriteError{Outcome: sheetsio.NotSent, Code: sheetsio.CodeCredentialsRejected, Status: cmp.Or(statusOf(err), tokenRefused(err)), Err: err}
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return classifyStatus(gerr, err)
	}
	return &sheetsio.WriteError{Outcome: sheetsio.Uncertain, Code: transportCode(err), Err: err}
}

func classifyStatus(gerr *googleapi.Error, err error) *sheetsio.WriteError {
	w := &sheetsio.WriteError{Outcome: sheetsio.Uncertain, Status: gerr.Code, Err: err}
	structured := gerr.Message != "" || len(gerr.Errors) > 0
	switch {
	case gerr.Code == http.StatusRequestEntityTooLarge || (gerr.Code == http.StatusBadRequest && sizeMessage(gerr.Message)):
		w.Outcome, w.Code = sheetsio.Terminal, sheetsio.WritePayloadTooLarge
	case gerr.Code == http.StatusBadRequest && capacityMessage(gerr.Message):
		w.Outcome, w.Code = sheetsio.NotSent, sheetsio.CodeSpreadsheetCapacity // refused whole: nothing applied
	case gerr.Code == http.StatusNotFound:
		w.Code = sheetsio.WriteNotFound
	case gerr.Code == http.StatusTooManyRequests:
		w.Code = sheetsio.WriteRateLimited
	case gerr.Code >= 500:
		w.Code = sheetsio.WriteServerError
	case gerr.Code >= 400 && gerr.Code < 500 && gerr.Code != http.StatusRequestTimeout && structured:
		w.Outcome, w.Code = sheetsio.Terminal, sheetsio.WriteRejected
	case !structured:
		w.Code = sheetsio.WriteResponseNotJSON
	default:
		w.Code = sheetsio.WriteUnknown
	}
	return w
}

// capacityMessage recognises Sheets' refusal to grow a spreadsheet past
// its cells ("… would increase the number of cells in the workbook above
// the limit of 10000000 cells.").
func capacityMessage(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "number of cells") && strings.Contains(m, "above the limit")
}

func sizeMessage(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "payload size") || strings.Contains(m, "too large") || strings.Contains(m, "request entity")
}

func transportCode(err error) string {
	var nerr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout():
		return sheetsio.WriteTimeout
	case isJSONDecodeError(err):
		return sheetsio.WriteResponseNotJSON
	case isConnectionError(err):
		return sheetsio.WriteConnectionLost
	}
	return sheetsio.WriteUnknown
}

func isJSONDecodeError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

func isConnectionError(err error) bool {
	var oe *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &oe)
}
