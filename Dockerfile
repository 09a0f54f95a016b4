# syntax=docker/dockerfile:1
# The gateway as an image (docs/deploying.md, "Image and compose"). The build stage makes the npm
# package; the runtime stage installs that package alone, as an operator would, without the
# development tools. The development machines of this project cannot build images (no Docker
# daemon): test/package/deploy-files.test.ts fails when a step here is not the one the package test
# (test/package/package.test.ts) runs for real, from one list (test/helpers/install-steps.ts).

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build
RUN mkdir -p /pack && npm pack --pack-destination /pack

FROM ${NODE_IMAGE}
COPY --from=build /pack/ /pack/
WORKDIR /opt/gateway
RUN npm install --omit=dev --no-audit --no-fund --prefer-offline /pack/generation-gateway-*.tgz && rm -rf /pack /root/.npm
ENV PATH=/opt/gateway/node_modules/.bin:$PATH
# The shipped configuration, every channel left out until its variables are set; mount your own
# directory over /etc/gateway to change it (it is read, and watched, never written).
RUN gateway init /etc/gateway
RUN useradd --system --user-group --home-dir /var/lib/gateway --shell /usr/sbin/nologin gateway && mkdir -p /var/lib/gateway && chown gateway:gateway /var/lib/gateway
ENV GATEWAY_CONFIG_DIR=/etc/gateway GATEWAY_DB=/var/lib/gateway/gateway.db
# The embedded SQLite store; with GATEWAY_DB=postgres://… (several replicas) it stays empty.
VOLUME /var/lib/gateway
USER gateway
WORKDIR /var/lib/gateway
EXPOSE 8080
# /healthz asks nothing of anyone (docs/deploying.md, "Health and shutdown"); node's own fetch, as
# the slim image has no curl. An OCI image (podman build's default) drops it: podman build --format
# docker keeps it (docs/deploying.md, "Containers with podman"); compose.yaml says it again.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM drains: requests in flight may finish for GATEWAY_DRAIN_MS (25 s), so give the container
# 30 s to stop (docker stop -t 30, compose stop_grace_period); Docker's own default is 10 s.
STOPSIGNAL SIGTERM
ENTRYPOINT ["gateway"]
CMD ["start", "--config", "/etc/gateway"]
