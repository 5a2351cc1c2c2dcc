// src/version.ts's VERSION feeds adcp_error.sdk_id: it must equal package.json's version.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SDK_ID, VERSION } from '../../src/version.js';
import { REPO } from '../helpers/repo.js';

const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { name: string; version: string };

test('VERSION equals package.json version', () => {
  assert.equal(VERSION, pkg.version);
});

test('SDK_ID is <package name>@<version>', () => {
  assert.equal(SDK_ID, `${pkg.name}@${pkg.version}`);
});
