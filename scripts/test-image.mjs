// The container image (Containerfile), built and run on this machine with podman: the base
// is a Debian root made with debootstrap (registry images cannot be pulled here), the image
// runs with a read-only root filesystem and a tmpfs /tmp against the machine's PostgreSQL,
// must become healthy, take a user made with `keel create-user`, sign that user in over
// HTTP, serve a page with its security headers, and stop within 10 s of SIGTERM.
// Removes the containers, images and database it made; the Debian bases stay cached in
// .keel/image-base, so a second run skips debootstrap.
//   npm run test:image
// KEEL_IMAGE_PG_URL   a PostgreSQL superuser URL (postgres://postgres@127.0.0.1:5432/postgres)
// KEEL_IMAGE_SUITE    the Debian suite of the base, which must ship Node.js 20 (trixie)
// KEEL_IMAGE_MIRROR   the Debian mirror (default: the one apt uses here)
// KEEL_IMAGE_KEEP=1   keep the built image (localhost/keel-image-test) for a look afterwards
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';

process.chdir(fileURLToPath(new URL('..', import.meta.url)));
process.env.PATH = `${process.env.PATH}:/usr/local/sbin:/usr/sbin:/sbin`;

const SUITE = process.env.KEEL_IMAGE_SUITE || 'trixie';
const ADMIN_URL = process.env.KEEL_IMAGE_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const DATABASE = 'keel_image_test';
const BASE_DIR = resolve('.keel/image-base');
const TAG = 'localhost/keel-image-test:latest';
const CONTAINER = `keel-image-test-${process.pid}`;
const RUNTIME_BASE = `localhost/keel-image-base:${SUITE}`;
const BUILD_BASE = `localhost/keel-image-base:${SUITE}-npm`;
// What these machines need of podman: runc, and limits the sandbox lets a container set.
const PODMAN = ['--runtime', 'runc'];
const LIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];
const PATH_IN_IMAGE = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** Bump when the way the bases are made changes, so cached tarballs are made anew. */
const BASE_RECIPE = 1;
const STOP_LIMIT_MS = 10_000;
const HEALTH_LIMIT_MS = 180_000;

const isRoot = process.getuid?.() === 0;
const log = (line) => process.stdout.write(`[image] ${line}\n`);
let interrupted = false;

class Failure extends Error {}

/** Runs a command; `privileged` goes through sudo unless this is root. Throws on a non-zero exit unless `allowFail`. */
function run(command, args, { privileged = false, capture = false, allowFail = false, env } = {}) {
  let argv = [command, ...args];
  if (env) argv = ['env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv];
  if (privileged && !isRoot) argv = ['sudo', ...argv];
  const result = spawnSync(argv[0], argv.slice(1), {
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw new Failure(`${command} could not run: ${result.error.message}`);
  if (result.status !== 0 && !allowFail) {
    const said = capture ? `\n${result.stderr || result.stdout}` : '';
    throw new Failure(`${[command, ...args].join(' ')} exited with ${result.status ?? result.signal}${said}`);
  }
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

const podman = (args, options = {}) => run('podman', [...PODMAN, ...args], { privileged: true, ...options });
const onPath = (binary) => (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, binary)));

let passed = 0;
function check(ok, what, detail = '') {
  if (!ok) throw new Failure(`${what}${detail ? `: ${detail}` : ''}`);
  passed += 1;
  log(`ok ${passed} - ${what}`);
}

function ensureTools() {
  const missing = [
    ['podman', 'podman'],
    ['runc', 'runc'],
    ['debootstrap', 'debootstrap'],
  ]
    .filter(([binary]) => !onPath(binary))
    .map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  log(`installing ${missing.join(', ')} with apt-get`);
  run('apt-get', ['update', '-qq'], { privileged: true });
  run('apt-get', ['install', '-y', '-qq', ...missing], {
    privileged: true,
    env: { DEBIAN_FRONTEND: 'noninteractive' },
  });
}

const RELEASE = /^(?:oldoldstable|oldstable|stable|testing|unstable|sid|buster|bullseye|bookworm|trixie|forky)$/;

/** The Debian archive apt uses on this machine (its security archive and third-party sources aside). */
function debianMirror() {
  if (process.env.KEEL_IMAGE_MIRROR) return process.env.KEEL_IMAGE_MIRROR;
  const entries = [];
  const files = ['/etc/apt/sources.list'];
  if (existsSync('/etc/apt/sources.list.d')) {
    files.push(
      ...readdirSync('/etc/apt/sources.list.d')
        .filter((f) => /\.(list|sources)$/.test(f))
        .map((f) => join('/etc/apt/sources.list.d', f)),
    );
  }
  for (const file of files.filter((f) => existsSync(f))) {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const field = (name) =>
          stanza
            .match(new RegExp(`^${name}:\\s*(.+)$`, 'im'))?.[1]
            .trim()
            .split(/\s+/) ?? [];
        if (!field('Types').includes('deb') || /^Enabled:\s*no/im.test(stanza)) continue;
        for (const uri of field('URIs')) entries.push({ uri, suites: field('Suites') });
      }
    } else {
      for (const line of text.split('\n')) {
        const words = line
          .replace(/#.*/, '')
          .replace(/\[[^\]]*\]/, '')
          .trim()
          .split(/\s+/);
        if (words[0] === 'deb' && words.length >= 3) entries.push({ uri: words[1], suites: [words[2]] });
      }
    }
  }
  const found = entries.find((e) => !/security/.test(e.uri) && e.suites.some((s) => RELEASE.test(s)));
  if (!found) throw new Failure('no Debian archive in /etc/apt/sources.list*: set KEEL_IMAGE_MIRROR');
  return found.uri;
}

/**
 * This machine's own certificate authorities (a TLS-inspecting proxy's, say):
 * the build base trusts them too, so npm reaches the registry as it does here.
 */
function localAuthorities() {
  const dir = '/usr/local/share/ca-certificates';
  const found = [];
  const visit = (path) => {
    for (const entry of readdirSync(path)) {
      const full = join(path, entry);
      if (statSync(full).isDirectory()) visit(full);
      else if (entry.endsWith('.crt')) found.push(full);
    }
  };
  if (existsSync(dir)) visit(dir);
  return found.sort();
}

const TAR_EXCLUDES = [
  './dev/*',
  './proc/*',
  './sys/*',
  './var/cache/apt/*',
  './var/lib/apt/lists/*',
  './usr/share/man/*',
  './usr/share/locale/*',
].map((p) => `--exclude=${p}`);

/**
 * The two bases as tarballs, cached by suite: Debian's nodejs (the image's base) and the
 * same with npm and this machine's certificate authorities (the build stage's base).
 */
function baseTarballs() {
  const authorities = localAuthorities();
  const key = createHash('sha256')
    .update(`${BASE_RECIPE}\0${SUITE}\0`)
    .update(authorities.map((path) => readFileSync(path, 'utf8')).join('\0'))
    .digest('hex')
    .slice(0, 12);
  const runtimeTar = join(BASE_DIR, `${SUITE}-${key}-node.tar`);
  const buildTar = join(BASE_DIR, `${SUITE}-${key}-node-npm.tar`);
  if (existsSync(runtimeTar) && existsSync(buildTar)) {
    log(`Debian ${SUITE} bases cached in ${BASE_DIR}`);
    return { runtimeTar, buildTar };
  }
  mkdirSync(BASE_DIR, { recursive: true });
  for (const stale of readdirSync(BASE_DIR).filter((f) => f.startsWith(`${SUITE}-`) && f.endsWith('.tar')))
    rmSync(join(BASE_DIR, stale));
  const mirror = debianMirror();
  const rootfs = join(BASE_DIR, `${SUITE}-root`);
  const started = performance.now();
  run('rm', ['-rf', rootfs], { privileged: true });
  log(`debootstrap ${SUITE} from ${mirror}`);
  run('debootstrap', ['--variant=minbase', '--include=nodejs,ca-certificates', SUITE, rootfs, mirror], {
    privileged: true,
    capture: true,
  });
  try {
    const node = run('chroot', [rootfs, 'node', '--version'], { privileged: true, capture: true }).stdout.trim();
    if (!node.startsWith('v20.'))
      throw new Failure(
        `Debian ${SUITE} ships Node.js ${node}, not 20: set KEEL_IMAGE_SUITE to a suite with Node.js 20`,
      );
    const tar = (target) => {
      run('tar', ['-C', rootfs, '--numeric-owner', ...TAR_EXCLUDES, '-cf', `${target}.part`, '.'], {
        privileged: true,
      });
      renameSync(`${target}.part`, target);
    };
    tar(runtimeTar);
    for (const path of authorities)
      copyFileSync(
        path,
        join(
          rootfs,
          'usr/local/share/ca-certificates',
          `local-${createHash('sha256').update(path).digest('hex').slice(0, 8)}.crt`,
        ),
      );
    run('mount', ['-t', 'proc', 'proc', join(rootfs, 'proc')], { privileged: true });
    try {
      log("adding npm and this machine's certificate authorities for the build stage");
      run('chroot', [rootfs, 'apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'npm'], {
        privileged: true,
        capture: true,
        env: { DEBIAN_FRONTEND: 'noninteractive' },
      });
      run('chroot', [rootfs, 'update-ca-certificates'], { privileged: true, capture: true });
    } finally {
      run('umount', [join(rootfs, 'proc')], { privileged: true });
    }
    tar(buildTar);
  } finally {
    run('rm', ['-rf', rootfs], { privileged: true });
  }
  log(`bases made in ${seconds(started)} s`);
  return { runtimeTar, buildTar };
}

const seconds = (since) => ((performance.now() - since) / 1000).toFixed(1);

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

async function withAdmin(work) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const containerState = () => {
  const { stdout } = podman(['container', 'inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', CONTAINER], {
    capture: true,
  });
  const [status, exitCode] = stdout.trim().split(' ');
  return { status, exitCode: Number(exitCode) };
};
const containerLogs = () => {
  const { stdout, stderr } = podman(['logs', CONTAINER], { capture: true, allowFail: true });
  return `${stdout}${stderr}`;
};
const inContainer = (args, options = {}) =>
  podman(['exec', ...(options.env ?? []), CONTAINER, ...args], { capture: true, allowFail: true });

async function waitForHealth() {
  const started = performance.now();
  for (;;) {
    const { status } = containerState();
    if (status !== 'running') throw new Failure(`the container is ${status} before it was healthy`);
    // The image's own HEALTHCHECK, run on demand (no systemd here to run it on a timer).
    if (podman(['healthcheck', 'run', CONTAINER], { capture: true, allowFail: true }).status === 0)
      return performance.now() - started;
    if (interrupted) throw new Failure('interrupted');
    if (performance.now() - started > HEALTH_LIMIT_MS)
      throw new Failure(`not healthy within ${HEALTH_LIMIT_MS / 1000} s`);
    await delay(500);
  }
}

async function main() {
  const figures = {};
  const testStarted = performance.now();
  let built = false;
  let started = false;
  let databaseMade = false;
  const imported = [];
  try {
    ensureTools();
    const { runtimeTar, buildTar } = baseTarballs();
    for (const [tar, image] of [
      [runtimeTar, RUNTIME_BASE],
      [buildTar, BUILD_BASE],
    ]) {
      podman(['import', '--quiet', '--change', `ENV PATH=${PATH_IN_IMAGE}`, tar, image], { capture: true });
      imported.push(image);
    }

    log('building the image (npm ci and next build inside)');
    const buildStarted = performance.now();
    built = true;
    podman([
      'build',
      '--format',
      'docker',
      '--layers=false',
      '--force-rm',
      '--network',
      'host',
      ...LIMITS,
      '--build-arg',
      `BASE=${RUNTIME_BASE}`,
      '--build-arg',
      `BUILD_BASE=${BUILD_BASE}`,
      '-f',
      'Containerfile',
      '-t',
      TAG,
      '.',
    ]);
    figures.build = seconds(buildStarted);
    const [image] = JSON.parse(podman(['image', 'inspect', TAG], { capture: true }).stdout);
    figures.sizeMb = Math.round(image.Size / 1e6);
    log(`built in ${figures.build} s: ${TAG}, ${figures.sizeMb} MB`);
    check(image.Config.User === 'keel', 'the image runs as its own user', image.Config.User);
    check(
      image.Config.Entrypoint?.[0] === 'node' && image.Config.Entrypoint.includes('bin/keel.ts'),
      'the entrypoint is the launcher run by node',
      JSON.stringify(image.Config.Entrypoint),
    );
    check(
      (image.Healthcheck ?? image.Config.Healthcheck)?.Test?.join(' ').includes('bin/healthcheck.mjs'),
      'the image has its HEALTHCHECK',
    );

    await withAdmin(async (admin) => {
      await admin.query(`drop database if exists ${DATABASE} with (force)`);
      await admin.query(`create database ${DATABASE}`);
    });
    databaseMade = true;
    const databaseUrl = new URL(ADMIN_URL);
    databaseUrl.pathname = `/${DATABASE}`;
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const metricsToken = randomBytes(24).toString('hex');

    log(`running it read-only on port ${port}`);
    const runStarted = performance.now();
    started = true;
    podman(
      [
        'run',
        '--detach',
        '--name',
        CONTAINER,
        '--network',
        'host',
        ...LIMITS,
        '--read-only',
        '--read-only-tmpfs=false',
        '--tmpfs',
        '/tmp:rw,noexec,nosuid,nodev,size=256m,mode=1777',
        '--cap-drop',
        'all',
        '--security-opt',
        'no-new-privileges',
        '-e',
        `DATABASE_URL=${databaseUrl}`,
        '-e',
        `KEEL_CHECKPOINT_KEY=${randomBytes(32).toString('hex')}`,
        '-e',
        `PORT=${port}`,
        '-e',
        `KEEL_BASE_URL=${origin}`,
        '-e',
        `KEEL_METRICS_TOKEN=${metricsToken}`,
        '-e',
        'KEEL_INSTANCE_ID=keel-image-test',
        TAG,
      ],
      { capture: true },
    );
    const healthyAfter = await waitForHealth();
    figures.healthy = seconds(runStarted);
    check(true, `healthy (image HEALTHCHECK) ${(healthyAfter / 1000).toFixed(1)} s after the container started`);

    const mounts = inContainer(['cat', '/proc/mounts']).stdout.split('\n');
    const rootMount = mounts.find((line) => line.split(' ')[1] === '/');
    check(rootMount?.split(' ')[3].split(',').includes('ro'), 'the root filesystem is mounted read-only', rootMount);
    const status = inContainer(['cat', '/proc/1/status']).stdout;
    const uid = status.match(/^Uid:\s+(\d+)/m)?.[1];
    check(uid !== undefined && uid !== '0', 'process 1 is not root', `uid ${uid}`);
    const cmdline = inContainer(['cat', '/proc/1/cmdline']).stdout.split('\0').filter(Boolean);
    check(
      cmdline[0] === 'node' && cmdline.includes('bin/keel.ts') && cmdline.includes('start'),
      'process 1 is node running the launcher',
      cmdline.join(' '),
    );
    check(inContainer(['test', '-e', '/tmp/keel']).status !== 0, 'with DATABASE_URL nothing is written to KEEL_HOME');

    const health = await fetch(`${origin}/api/health`);
    check(health.status === 200, 'GET /api/health answers 200', String(health.status));

    const password = randomBytes(18).toString('base64url');
    const created = inContainer(
      [
        'node',
        '--import',
        'tsx',
        '--conditions=react-server',
        'bin/keel.ts',
        'create-user',
        '--username',
        'image_admin',
        '--role',
        'admin',
        '--name',
        'Image Admin',
      ],
      {
        env: ['-e', `KEEL_NEW_USER_PASSWORD=${password}`],
      },
    );
    check(
      created.status === 0 && created.stdout.includes('created image_admin'),
      'keel create-user makes an admin in the running container',
      created.stderr || created.stdout,
    );

    const anonymous = await fetch(`${origin}/executions`, { redirect: 'manual' });
    check(
      anonymous.status >= 300 &&
        anonymous.status < 400 &&
        (anonymous.headers.get('location') ?? '').includes('/sign-in'),
      'a page without a session redirects to sign-in',
      `${anonymous.status} ${anonymous.headers.get('location')}`,
    );

    const signIn = await fetch(`${origin}/api/auth/sign-in/username`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: origin },
      body: JSON.stringify({ username: 'image_admin', password }),
    });
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    check(
      signIn.status === 200 && cookie !== '',
      'the user signs in over HTTP',
      `${signIn.status} ${await signIn.text()}`,
    );

    const page = await fetch(`${origin}/executions`, { headers: { Cookie: cookie }, redirect: 'manual' });
    const html = await page.text();
    check(
      page.status === 200 && html.includes('data-testid="signed-in-user"') && html.includes('>image_admin<'),
      'GET /executions with the session serves the page to that user',
      String(page.status),
    );
    const csp = page.headers.get('content-security-policy') ?? '';
    const nonce = csp.match(/script-src 'self' 'nonce-([A-Za-z0-9+/=]+)' 'strict-dynamic'(;|$)/)?.[1];
    check(
      nonce !== undefined && html.includes(`nonce="${nonce}"`),
      "the page's Content-Security-Policy carries the nonce its scripts use",
      csp,
    );
    check(
      ["frame-ancestors 'none'", "object-src 'none'", "base-uri 'self'"].every((d) => csp.includes(d)) &&
        !csp.includes('unsafe-eval'),
      'the policy forbids framing, plugins and eval',
      csp,
    );
    const baseline = {
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
    };
    const wrong = Object.entries(baseline).filter(([name, value]) => page.headers.get(name) !== value);
    check(
      wrong.length === 0 && (page.headers.get('permissions-policy') ?? '').startsWith('camera=()'),
      'the baseline security headers are sent',
      JSON.stringify(wrong),
    );

    const metrics = await fetch(`${origin}/api/metrics`, { headers: { Authorization: `Bearer ${metricsToken}` } });
    const scraped = await metrics.text();
    check(
      metrics.status === 200 && /^keel_http_processes /m.test(scraped),
      '/api/metrics answers the bearer KEEL_METRICS_TOKEN',
      String(metrics.status),
    );

    const written = inContainer(['ls', '-A', '/tmp']).stdout.trim().split('\n').filter(Boolean);
    log(`written to /tmp: ${written.join(', ') || 'nothing'}`);

    const stopStarted = performance.now();
    podman(['stop', '--time', String(STOP_LIMIT_MS / 1000), CONTAINER], { capture: true });
    const stopMs = performance.now() - stopStarted;
    figures.stop = (stopMs / 1000).toFixed(1);
    const stopped = containerState();
    check(
      stopped.status === 'exited' && stopMs < STOP_LIMIT_MS,
      `stopped by SIGTERM in ${figures.stop} s`,
      `${stopped.status} after ${figures.stop} s`,
    );
    check(stopped.exitCode === 143, 'the launcher exited on its own (143), not killed', String(stopped.exitCode));
    const logs = containerLogs();
    check(logs.includes('[keel] stopped'), 'the launcher logged its stop');
    const trouble = logs
      .split('\n')
      .filter((line) => /EROFS|read-only file system|building the console|EACCES/i.test(line));
    check(trouble.length === 0, 'no write refused and no build at start in the logs', trouble.join('\n'));
    podman(['rm', CONTAINER], { capture: true });
    check(
      podman(['container', 'exists', CONTAINER], { capture: true, allowFail: true }).status === 1,
      'the container is gone',
    );
    started = false;

    log(
      `PASS: ${passed} checks; build ${figures.build} s, image ${figures.sizeMb} MB, ` +
        `healthy ${figures.healthy} s after run, stop ${figures.stop} s; ${seconds(testStarted)} s in all`,
    );
    return 0;
  } catch (error) {
    if (started) process.stdout.write(`--- container log ---\n${containerLogs()}\n---\n`);
    log(`FAILED: ${error instanceof Failure ? error.message : (error?.stack ?? error)}`);
    log(`FAIL after ${passed} passed checks`);
    return 1;
  } finally {
    if (started) podman(['rm', '--force', CONTAINER], { capture: true, allowFail: true });
    const images = [...(built && process.env.KEEL_IMAGE_KEEP !== '1' ? [TAG] : []), ...imported];
    if (images.length > 0) podman(['rmi', '--force', ...images], { capture: true, allowFail: true });
    if (databaseMade)
      await withAdmin((admin) => admin.query(`drop database if exists ${DATABASE} with (force)`)).catch((error) =>
        log(`could not drop ${DATABASE}: ${error.message}`),
      );
  }
}

// Ctrl-C stops the step under way (its command gets the signal too), then cleans up.
process.on('SIGINT', () => {
  interrupted = true;
});
process.exitCode = await main();
