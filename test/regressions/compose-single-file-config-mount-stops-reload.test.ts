/**
 * Regression (a new user's trial, 2026-12-03, F9): docker/docker-compose.yml bind-mounted the
 * config as a single file (`./gateway.yaml:/etc/adcp-buyer-gateway/gateway.yaml:ro`). A
 * single-file bind mount holds the file's inode: an editor on the host saves by writing a new
 * file and renaming it over the old one, and the container keeps reading the old file, so
 * live reload silently stopped after the first such save (the README's own warning, "Config
 * reload"). The gateway watches the config's directory (src/config-watch.ts), so mounting the
 * directory lets the renamed file, and the event for it, reach the container.
 *
 * No Docker here: the compose file is read as data.
 * Expected: the volume that provides the service's `--config` file mounts its directory
 * (`/etc/adcp-buyer-gateway`, the image's CMD path's directory), read-only, from a host
 * directory that holds that file; no volume mounts the file itself.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { REPO } from '../helpers/repo.js';

const DOCKER_DIR = join(REPO, 'docker');
const compose = parseYaml(readFileSync(join(DOCKER_DIR, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, { command?: string[]; volumes?: string[] }>;
};

describe('docker-compose: the config is mounted so live reload sees an edit saved by rename', () => {
  it("mounts the config's directory read-only, not the file", () => {
    const gateway = compose.services.gateway!;
    const command = gateway.command ?? [];
    const configPath = command[command.indexOf('--config') + 1]!;
    assert.equal(configPath, '/etc/adcp-buyer-gateway/gateway.yaml');
    const mounts = (gateway.volumes ?? []).map((v) => v.split(':'));
    assert.deepEqual(mounts.filter(([, target]) => target === configPath), [], 'no single-file mount of the config');
    const dirMounts = mounts.filter(([, target]) => target === posix.dirname(configPath));
    assert.equal(dirMounts.length, 1, `one volume mounts ${posix.dirname(configPath)}`);
    const [source, , mode] = dirMounts[0]!;
    assert.equal(mode, 'ro');
    const hostDir = join(DOCKER_DIR, source!);
    assert.ok(existsSync(hostDir) && statSync(hostDir).isDirectory(), `docker/${source} is a directory`);
    assert.ok(statSync(join(hostDir, posix.basename(configPath))).isFile(), `docker/${source} holds gateway.yaml`);
  });
});
