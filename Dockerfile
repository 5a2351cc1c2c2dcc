# syntax=docker/dockerfile:1
#
# adcp-buyer-gateway as a container. Two stages: compile TypeScript with the full dependency
# tree, then run the compiled output with production dependencies only, as the unprivileged
# `node` user.
#
# The image has no config baked in: mount a directory holding gateway.yaml at
# /etc/adcp-buyer-gateway (docker/docker-compose.yml mounts docker/config; a single-file mount
# stops live reload once an editor saves by rename). Inside a container the config must say
# `listen.host: 0.0.0.0`: 127.0.0.1 there is the container's own loopback, unreachable from
# the buyer's container.
#
# Both stages pin the Node 22 the tests pin (scripts/node-binary.ts PINNED_NODE_VERSIONS; a test
# checks they agree): `node:22-bookworm-slim` moved with every Node 22 release, so an image
# built later ran a Node no test had run (a hostile trial 45). Raise both together.

# ---- build ---------------------------------------------------------------------------------
FROM node:22.23.5-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would run the build before the sources are here; it runs below.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The compile alone: `npm run build` runs it through scripts/build-if-stale.ts, which stamps
# dist/ for the tests (scripts/ is not in the build context).
RUN npm run build:tsc

# ---- runtime -------------------------------------------------------------------------------
FROM node:22.23.5-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
EXPOSE 8787
# --disable-sigusr1 (Node >= 22.14; the image's Node, 22.23.5, has it): SIGUSR1 (logrotate-style
# tools send it) never opens Node's inspector, an unauthenticated debugging port on loopback,
# which a buyer's container sharing the pod's network could use, not even in Node's own start-up
# before the gateway's listener is on (README, "Signals").
ENTRYPOINT ["node","--disable-sigusr1","dist/main.js"]
CMD ["--config","/etc/adcp-buyer-gateway/gateway.yaml"]
