# syntax=docker/dockerfile:1
# Rampart server image (also carries the rampart-worker CLI). Multi-stage: the build stage
# installs everything and builds the web bundle and the worker CLI's bundle; the runtime stage
# has production dependencies only, runs as the unprivileged `node` user, and reports health on
# /healthz.
# The server runs its TypeScript sources directly on Node 24 (type stripping), so there is no
# transpile step: the sources are the artifact (docs/decisions.md, "Production build").

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/src ./src
COPY --from=build /app/bin ./bin
COPY --from=build /app/docs ./docs
COPY --from=build /app/dist/web ./dist/web
COPY --from=build /app/dist/worker-cli ./dist/worker-cli
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--no-wasm-code-gc", "src/server/main.ts"]
