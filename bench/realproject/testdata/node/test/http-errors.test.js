'use strict'

const test = require('node:test')
const assert = require('node:assert')
const { defineErrors, errorResponse } = require('../lib/http-errors')

test('defineErrors and errorResponse', () => {
  const errors = defineErrors({ NOT_FOUND: ['%s not found', 404], TEAPOT: ['short and stout', 418] })
  assert.deepStrictEqual(errorResponse(new errors.NOT_FOUND('user')), {
    statusCode: 404,
    body: { name: 'FastifyError', code: 'NOT_FOUND', message: 'user not found', statusCode: 404 }
  })
  assert.strictEqual(errorResponse(new errors.TEAPOT()).statusCode, 418)
})

test('errorResponse hides other errors', () => {
  const res = errorResponse(new Error('database password is hunter2'))
  assert.strictEqual(res.statusCode, 500)
  assert.strictEqual(res.body.message, 'Internal Server Error')
  assert.strictEqual(errorResponse('a string').statusCode, 500)
})
