package container

import (
	"context"
	"fmt"
	"io"
)

// Image is the image a run's containers start from.
type Image struct {
	Ref, Source string
	Built       bool
}

// ResolveImage (stub until the devcontainer work lands).
func ResolveImage(ctx context.Context, rt Runtime, root, configured string, progress io.Writer) (Image, error) {
	if configured == "" {
		return Image{}, fmt.Errorf("set container.image")
	}
	ok, err := rt.ImageExists(ctx, configured)
	if err != nil || !ok {
		return Image{}, fmt.Errorf("container.image %s: the engine has no such image", configured)
	}
	return Image{Ref: configured, Source: "container.image"}, nil
}
