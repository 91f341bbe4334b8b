# syntax=docker/dockerfile:1
# Multi-stage build of the registry: a static Go binary on a distroless base, non-root,
# with its data (SQLite file and package blobs) on a volume.
#
#   docker build -t pluginyard/registry .
#   docker run -p 8080:8080 -v registry-data:/data pluginyard/registry            # serve
#   docker run -p 8080:8080 -v registry-data:/data pluginyard/registry serve --demo
#
# The example plugins used by --demo are embedded in the binary; plugins.yaml is copied in
# and can be replaced by mounting another file at /etc/registry/plugins.yaml.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/registry ./cmd/registry
# The data directory must exist and belong to the runtime user before VOLUME copies it.
RUN mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/registry /usr/local/bin/registry
COPY --from=build --chown=65532:65532 /out/data /data
COPY plugins.yaml /etc/registry/plugins.yaml
USER 65532:65532
ENV REGISTRY_DATA=/data \
    REGISTRY_ADDR=0.0.0.0:8080 \
    REGISTRY_PLUGINS=/etc/registry/plugins.yaml
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["registry"]
CMD ["serve"]
