# vmctl's container image: for a Job or a debug pod where an incident responder has only a
# cluster shell (deploy/job.yaml runs `vmctl snapshot -A -` in it).
#
#   docker build -t vmctl:0.1.0 .      (or: podman build -t vmctl:0.1.0 .)
#
# Two stages: the build (Rust on Debian 12) runs deploy/build-release.sh, the same script CI
# runs as a plain script; the runtime is distroless's cc image for Debian 12 (glibc and
# libgcc, which is all the default build links: TLS is rustls, the allocator is static),
# as user nonroot, without a shell. The libvirt build (`--features libvirt`) is not in the
# image: it drives libvirt on a host, not in a cluster.

# Pinned to the toolchain the project is built and tested with (Cargo.lock is committed).
FROM docker.io/library/rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN deploy/build-release.sh /out

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/bin/ /usr/local/bin/
COPY --from=build /out/share/ /usr/local/share/
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/vmctl"]
CMD ["--help"]
