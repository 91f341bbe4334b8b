package server

// SetSendfileMin sets the smallest document body sent from its file and returns the
// function that restores it. Tests that call it must not run in parallel.
func SetSendfileMin(n int) (restore func()) {
	old := sendfileMin
	sendfileMin = n
	return func() { sendfileMin = old }
}
