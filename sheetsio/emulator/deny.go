package emulator

// Deny makes every API request for spreadsheetID answer 403
// PERMISSION_DENIED "The caller does not have permission", as Google does
// when the spreadsheet is not shared with the caller (service account).
// It applies whether or not the spreadsheet exists, takes precedence over
// AutoCreate, faults and quota, and lasts until Allow. Denied requests are
// counted like any received request. Denials are not saved by Save.
func (e *Emulator) Deny(spreadsheetID string) {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	e.denied[spreadsheetID] = true
}

// Allow lifts a Deny.
func (e *Emulator) Allow(spreadsheetID string) {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	delete(e.denied, spreadsheetID)
}

func (e *Emulator) isDenied(spreadsheetID string) bool {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	return e.denied[spreadsheetID]
}

// permissionDenied is Google's answer for a spreadsheet the caller cannot see.
func permissionDenied() *apiFailure {
	return &apiFailure{err: errorf(ErrPermissionDenied, "The caller does not have permission")}
}
