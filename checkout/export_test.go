package checkout

// SetRetentionBatch makes DeleteEnded's batches n rows until the test ends,
// so that a test sees it loop over several.
func SetRetentionBatch(t interface{ Cleanup(func()) }, n int) {
	old := retentionBatch
	retentionBatch = n
	t.Cleanup(func() { retentionBatch = old })
}
