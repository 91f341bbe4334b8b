package s3blob

// SetBeforeUpload makes Put call f between finding the blob absent and uploading it: where
// another writer's create races it.
func SetBeforeUpload(s *Store, f func(sha string)) { s.beforeUpload = f }
