import { describe, expect, it } from 'vitest';
import {
  canonicalZone,
  formatWallTime,
  formatZonedTime,
  fromWallTimeInput,
  isoInZone,
  parseTimeZonePreference,
  resolveZone,
  toWallTimeInput,
  usableZone,
  utcIsoInZone,
  zoneLabel,
  zoneOffsetMinutes,
} from '../../lib/domain/time-zone';

const at = (iso: string) => Date.parse(iso);

describe('time zone preference', () => {
  it('takes utc, browser and IANA names, spelled as Intl spells them', () => {
    expect(parseTimeZonePreference('utc')).toBe('utc');
    expect(parseTimeZonePreference('browser')).toBe('browser');
    expect(parseTimeZonePreference('Europe/Berlin')).toBe('Europe/Berlin');
    expect(parseTimeZonePreference('europe/berlin')).toBe('Europe/Berlin');
    // Three-part names pass; ICU may answer its own canonical spelling (America/Buenos_Aires).
    expect(parseTimeZonePreference(' America/Argentina/Buenos_Aires ')).toMatch(
      /^America\/(Argentina\/)?Buenos_Aires$/,
    );
    expect(parseTimeZonePreference('Etc/GMT+5')).toBe('Etc/GMT+5');
    // UTC by name is the utc preference, not a zone of its own.
    expect(parseTimeZonePreference('UTC')).toBe('utc');
    expect(parseTimeZonePreference('Etc/UTC')).toBe('utc');
  });

  it('refuses what is not a zone: unknown names, offsets, paths, other types', () => {
    for (const bad of ['Mars/Olympus', '+01:00', 'UTC+1', '../etc/passwd', '', 'Europe/Berlin\u0000', 'a'.repeat(65)])
      expect(parseTimeZonePreference(bad), bad).toBeNull();
    for (const bad of [null, undefined, 42, {}, ['utc']]) expect(parseTimeZonePreference(bad)).toBeNull();
    expect(canonicalZone('Browser')).toBeNull();
  });

  it("resolves 'browser' to the browser's zone when it is a real one, else UTC", () => {
    expect(resolveZone('utc', 'Europe/Berlin')).toBe('UTC');
    expect(resolveZone('browser', 'Asia/Tokyo')).toBe('Asia/Tokyo');
    expect(resolveZone('browser', null)).toBe('UTC');
    expect(resolveZone('browser', 'Nowhere/Land')).toBe('UTC');
    expect(resolveZone('America/New_York', 'Asia/Tokyo')).toBe('America/New_York');
    expect(usableZone('Nowhere/Land')).toBe('UTC');
  });
});

describe('formatting in a zone', () => {
  const winter = at('2026-12-03T10:00:00Z');
  const summer = at('2026-07-01T10:00:00Z');

  it('shows the wall clock and names the zone by its offset at that instant', () => {
    expect(formatZonedTime(winter, 'UTC')).toBe('2026-12-03 10:00:00 UTC');
    expect(formatZonedTime(winter, 'Europe/Berlin')).toBe('2026-12-03 11:00:00 UTC+01:00');
    expect(formatZonedTime(summer, 'Europe/Berlin')).toBe('2026-07-01 12:00:00 UTC+02:00');
    expect(formatZonedTime(winter, 'America/New_York')).toBe('2026-12-03 05:00:00 UTC-05:00');
    expect(formatZonedTime(winter, 'Asia/Kolkata')).toBe('2026-12-03 15:30:00 UTC+05:30');
    expect(formatWallTime(at('2026-12-03T23:30:00Z'), 'Asia/Tokyo')).toBe('2026-12-04 08:30:00');
    // Midnight is 00, never 24.
    expect(formatWallTime(at('2026-12-03T23:00:00Z'), 'Europe/Berlin')).toBe('2026-12-04 00:00:00');
    expect(zoneLabel('Europe/London', winter)).toBe('UTC+00:00');
    expect(zoneOffsetMinutes('America/St_Johns', winter)).toBe(-210);
  });

  it('writes ISO 8601 with the offset, keeping microseconds', () => {
    expect(isoInZone(winter, 'UTC')).toBe('2026-12-03T10:00:00Z');
    expect(isoInZone(winter, 'Europe/Berlin')).toBe('2026-12-03T11:00:00+01:00');
    expect(utcIsoInZone('2026-12-03T10:00:00.123456Z', 'Europe/Berlin')).toBe('2026-12-03T11:00:00.123456+01:00');
    expect(utcIsoInZone('2026-12-03T10:00:00.123456Z', 'UTC')).toBe('2026-12-03T10:00:00.123456Z');
    expect(utcIsoInZone('2026-07-01T22:30:00Z', 'America/Los_Angeles')).toBe('2026-07-01T15:30:00-07:00');
    // The same instant, read back.
    expect(Date.parse(utcIsoInZone('2026-12-03T10:00:00.123Z', 'Asia/Kolkata'))).toBe(at('2026-12-03T10:00:00.123Z'));
    expect(utcIsoInZone('not a time', 'Europe/Berlin')).toBe('not a time');
  });
});

describe('datetime-local fields in a zone', () => {
  it('reads a wall time in the zone and shows an instant back the same way', () => {
    expect(fromWallTimeInput('2026-12-03T11:00', 'Europe/Berlin')).toBe(at('2026-12-03T10:00:00Z'));
    expect(fromWallTimeInput('2026-12-03T11:00', 'UTC')).toBe(at('2026-12-03T11:00:00Z'));
    expect(fromWallTimeInput('2026-12-03T11:00:30', 'America/New_York')).toBe(at('2026-12-03T16:00:30Z'));
    expect(toWallTimeInput(at('2026-12-03T10:00:00Z'), 'Europe/Berlin')).toBe('2026-12-03T11:00');
    expect(toWallTimeInput(at('2026-12-03T10:00:30Z'), 'Europe/Berlin')).toBe('2026-12-03T11:00:30');
    for (const zone of ['UTC', 'Europe/Berlin', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/Sao_Paulo']) {
      for (let day = 0; day < 365; day += 7) {
        const instant = at('2026-01-01T00:00:00Z') + day * 86_400_000 + 37 * 60_000;
        expect(fromWallTimeInput(toWallTimeInput(instant, zone), zone), `${zone} day ${day}`).toBe(instant);
      }
    }
  });

  it('a skipped wall time moves forward by the gap; a repeated one is its earlier instant', () => {
    // Berlin skips 02:00-03:00 on 2026-03-29: 02:30 does not exist and reads as 03:30 CEST.
    const skipped = fromWallTimeInput('2026-03-29T02:30', 'Europe/Berlin')!;
    expect(new Date(skipped).toISOString()).toBe('2026-03-29T01:30:00.000Z');
    expect(formatZonedTime(skipped, 'Europe/Berlin')).toBe('2026-03-29 03:30:00 UTC+02:00');
    // Berlin repeats 02:00-03:00 on 2026-10-25: 02:30 is first CEST (00:30Z), then CET (01:30Z).
    expect(new Date(fromWallTimeInput('2026-10-25T02:30', 'Europe/Berlin')!).toISOString()).toBe(
      '2026-10-25T00:30:00.000Z',
    );
  });

  it('refuses what is not a wall time', () => {
    for (const bad of ['', '2026-12-03', '2026-02-30T10:00', '2026-12-03T24:00', '2026-12-03 10:00', '12/03/2026'])
      expect(fromWallTimeInput(bad, 'Europe/Berlin'), bad).toBeNull();
  });
});
