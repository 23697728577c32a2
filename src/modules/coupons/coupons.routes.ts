import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors } from '../../core/http/schemas.js'
import {
  CreateFolderBody,
  DeleteBody,
  DeleteResult,
  FolderObject,
  ImportBody,
  ImportResult,
} from './coupons.schemas.js'
import { createCouponService } from './coupons.service.js'

const tags = ['Discount coupons']

export function couponRoutes(app: ApiApp, ctx: AppContext): void {
  const coupons = createCouponService(ctx)
  app.post(
    '/coupons/import',
    {
      schema: {
        tags,
        operationId: 'importCoupons',
        summary: 'Import discount codes into a folder (the default one when none is named)',
        body: ImportBody,
        response: { 200: ImportResult, ...commonErrors },
      },
    },
    async (req) => coupons.importCodes(req.account.id, req.body),
  )
  app.delete(
    '/coupons/delete',
    {
      schema: {
        tags,
        operationId: 'deleteCoupons',
        summary: 'Delete discount codes from a folder (the default one when none is named)',
        body: DeleteBody,
        response: { 200: DeleteResult, ...commonErrors },
      },
    },
    async (req) => coupons.deleteCodes(req.account.id, req.body),
  )
  app.post(
    '/coupons/folders',
    {
      schema: {
        tags,
        operationId: 'createCouponFolder',
        summary: 'Create a coupon folder',
        body: CreateFolderBody,
        response: { 200: FolderObject, ...commonErrors },
      },
    },
    async (req) => coupons.createFolder(req.account.id, req.body.name),
  )
  app.get(
    '/coupons/folders',
    {
      schema: {
        tags,
        operationId: 'listCouponFolders',
        summary: 'The coupon folders, the default one first',
        response: { 200: Type.Array(FolderObject), ...commonErrors },
      },
    },
    async (req) => coupons.folders(req.account.id),
  )
}
