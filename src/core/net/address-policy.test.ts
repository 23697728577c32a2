import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forbiddenAddressReason } from './address-policy.js'

describe('forbiddenAddressReason', () => {
  const refused: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['0.0.0.0', 'this network'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.100.100.200', 'carrier-grade NAT'], // a cloud metadata address
    ['169.254.169.254', 'link-local'], // the usual cloud metadata address
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['::1', 'loopback or unspecified'],
    ['::', 'loopback or unspecified'],
    ['[::1]', 'loopback or unspecified'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::a00:1', 'private'],
    ['2002:c0a8:101::1', 'private'],
    ['fc00::1', 'private'],
    ['fd00:ec2::254', 'private'], // the cloud metadata address over IPv6
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['localhost', 'not an IP address'],
  ]
  for (const [ip, reason] of refused) {
    it(`refuses ${ip} (${reason})`, () => assert.equal(forbiddenAddressReason(ip), reason))
  }

  for (const ip of [
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '93.184.216.34',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
  ]) {
    it(`allows ${ip}`, () => assert.equal(forbiddenAddressReason(ip), undefined))
  }
})
