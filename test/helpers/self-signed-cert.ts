/**
 * A self-signed TLS certificate for `127.0.0.1`, made at test time with node:crypto alone (no
 * openssl CLI, no committed key): an X.509 v3 certificate (RFC 5280 §4.1), DER-encoded here,
 * subject and issuer `CN=127.0.0.1`, subjectAltName IP 127.0.0.1, valid from a day ago to a
 * day from now, an ECDSA P-256 key signed with SHA-256 (ecdsa-with-SHA256, RFC 5758 §3.2).
 * A client that verifies certificates refuses it (`DEPTH_ZERO_SELF_SIGNED_CERT`: no CA signed
 * it); one that does not verify accepts it.
 */
import { generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';

export interface SelfSignedCert {
  /** The certificate, PEM. */
  readonly cert: string;
  /** Its private key, PEM (PKCS #8). */
  readonly key: string;
}

/** DER tag-length-value (X.690 §8.1: definite length, short or long form). */
function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let head: Buffer;
  if (n < 0x80) head = Buffer.from([tag, n]);
  else if (n < 0x100) head = Buffer.from([tag, 0x81, n]);
  else head = Buffer.from([tag, 0x82, n >> 8, n & 0xff]);
  return Buffer.concat([head, content]);
}

const seq = (...parts: Buffer[]): Buffer => tlv(0x30, Buffer.concat(parts));

/** An OBJECT IDENTIFIER from its dotted form (X.690 §8.19). */
function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const bytes = [a * 40 + b];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime `YYMMDDHHMMSSZ` (RFC 5280 §4.1.2.5.1: years before 2050). */
function utcTime(date: Date): Buffer {
  const two = (n: number) => String(n).padStart(2, '0');
  const text = `${two(date.getUTCFullYear() % 100)}${two(date.getUTCMonth() + 1)}${two(date.getUTCDate())}${two(date.getUTCHours())}${two(date.getUTCMinutes())}${two(date.getUTCSeconds())}Z`;
  return tlv(0x17, Buffer.from(text, 'ascii'));
}

const DAY_MS = 86_400_000;

export function selfSignedCert(): SelfSignedCert {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const name = seq(tlv(0x31, seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from('127.0.0.1', 'utf8')))));
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive, no leading zero byte
  const now = Date.now();
  // subjectAltName (2.5.29.17): GeneralNames { iPAddress [7] 127.0.0.1 }.
  const san = seq(oid('2.5.29.17'), tlv(0x04, seq(tlv(0x87, Buffer.from([127, 0, 0, 1])))));
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))), // version v3
    tlv(0x02, serial),
    ecdsaWithSha256,
    name, // issuer
    seq(utcTime(new Date(now - DAY_MS)), utcTime(new Date(now + DAY_MS))),
    name, // subject
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(0xa3, seq(san)),
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const der = seq(tbs, ecdsaWithSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const cert = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
  // The certificate parses and its signature is its own key's: a helper bug fails here, not as a TLS error.
  if (!new X509Certificate(cert).verify(publicKey)) throw new Error('self-signed certificate: signature does not verify');
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}
