# Build stage: compile TypeScript to plain JavaScript.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The database driver is a patched tarball in vendor/ (vendor/README.md), locked by its integrity.
COPY vendor ./vendor
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# Runtime stage: production dependencies and the compiled build only, run as a non-root user.
FROM node:20-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
COPY vendor ./vendor
# No production dependency needs an install script.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# node runs directly (not through npm) so SIGTERM reaches the server and it shuts down cleanly.
# The same V8 flags as npm start (see bench/README.md): an 8 MB young-generation
# semi-space, so requests' garbage dies young instead of being promoted (a quarter less CPU
# per request for ~20 MB more memory), and an old generation allowed to grow by 60 % of
# what survived the last full collection before the next one, rather than up to 300 %.
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=60", "dist/main.js"]
