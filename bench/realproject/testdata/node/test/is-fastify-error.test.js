'use strict'

const test = require('node:test')
const assert = require('node:assert')
const { createError } = require('..')
const { isFastifyError } = require('../lib/is-fastify-error')

test('isFastifyError recognises errors made by createError', () => {
  const NotFound = createError('not_found', '%s not found', 404)
  const err = new NotFound('user')
  assert.strictEqual(isFastifyError(err), true)
  assert.strictEqual(isFastifyError(err, 'NOT_FOUND'), true)
  assert.strictEqual(isFastifyError(err, 'not_found'), true)
  assert.strictEqual(isFastifyError(err, 'OTHER'), false)
})

test('isFastifyError refuses other values', () => {
  assert.strictEqual(isFastifyError(new Error('plain')), false)
  assert.strictEqual(isFastifyError({ code: 'NOT_FOUND' }), false)
  assert.strictEqual(isFastifyError(null), false)
  assert.strictEqual(isFastifyError(undefined), false)
  assert.strictEqual(isFastifyError('NOT_FOUND'), false)
})
