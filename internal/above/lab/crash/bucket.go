package crash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gocloud.dev/blob/fileblob"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/segstore"
	"github.com/hikoutei/hikoutei-go/segstore/blobstore"
)

// BucketSuffix names the folder beside the store directory DIR that
// holds the campaign's object store when Config.Bucket is set (DIR plus
// the suffix): a gocloud.dev/blob file bucket (fileblob, the same driver
// path as s3 or gcs: an object appears whole when its writer closes),
// opened by every process of the campaign as the store's SegmentStore.
// It lives outside the store directory, as an object store does.
const BucketSuffix = ".bucket"

// bucketPath is the bucket folder of store dir when bucket, else "".
func bucketPath(dir string, bucket bool) string {
	if !bucket {
		return ""
	}
	return filepath.Clean(dir) + BucketSuffix
}

// openBucket opens the fileblob bucket at path as a segment store (nil
// when path is "": the store's own segments folder).
func openBucket(path string) (segstore.Store, error) {
	if path == "" {
		return nil, nil
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, err
	}
	b, err := fileblob.OpenBucket(path, &fileblob.Options{Metadata: fileblob.MetadataDontWrite, NoTempDir: true})
	if err != nil {
		return nil, fmt.Errorf("open the segments bucket: %w", err)
	}
	return blobstore.New(b, segstore.Location{Scheme: "file", Where: path}), nil
}

// withSegments is opts reading and writing segments in segs (nil: the
// store's segments folder).
func withSegments(opts hikoutei.Options, segs segstore.Store) hikoutei.Options {
	if segs != nil {
		opts.SegmentStore = segs
	}
	return opts
}

// closeBucket closes segs (nil: nothing).
func closeBucket(segs segstore.Store) error {
	if segs == nil {
		return nil
	}
	return segs.Close()
}

// segmentPlaces are the stores a campaign's checks read segments from:
// the store's segments folder always (with a bucket, a segment there is
// one place too many), and the bucket when there is one.
func (k *checker) segmentPlaces() ([]segstore.Store, func(), error) {
	places := []segstore.Store{segstore.NewDir(filepath.Join(k.dir, events.SegmentsDir))}
	b, err := openBucket(k.bucket)
	if err != nil {
		return nil, nil, err
	}
	if b != nil {
		places = append(places, b)
	}
	return places, func() { _ = closeBucket(b) }, nil
}

// readSegment is segment name from place, false when place has none.
func readSegment(ctx context.Context, place segstore.Store, name string) ([]byte, bool, error) {
	b, err := place.Get(ctx, name)
	if errors.Is(err, segstore.ErrNotFound) {
		return nil, false, nil
	}
	return b, err == nil, err
}
