/**
 * Generated from the OpenAPI document of the Tidings API (/api/v1/openapi.json) by `npm run api-types`
 * (bin/api-types.ts, openapi-typescript). Do not edit: change the route schemas and run it again.
 */
export interface paths {
  '/api/v1/health': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Health (Svix) */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Up */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List applications */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default ascending */
          order?: 'ascending' | 'descending';
          /** @description Leave out applications without endpoints */
          exclude_apps_with_no_endpoints?: string;
          /** @description Leave out applications whose endpoints are all disabled */
          exclude_apps_with_disabled_endpoints?: string;
          /** @description Leave out applications whose endpoints are all Svix Play URLs */
          exclude_apps_with_svix_play_endpoints?: string;
        };
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseApplicationOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    /** Create application */
    post: {
      parameters: {
        query?: {
          get_if_exists?: string;
          get_or_create?: string;
        };
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['ApplicationInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ApplicationOut'];
          };
        };
        /** @description Default Response */
        201: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ApplicationOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get application */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ApplicationOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    /** Update (or create) application */
    put: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['ApplicationInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ApplicationOut'];
          };
        };
        /** @description Default Response */
        201: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ApplicationOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    post?: never;
    /** Delete application */
    delete: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Deleted */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    options?: never;
    head?: never;
    /** Patch application */
    patch: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['ApplicationPatchInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ApplicationOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List endpoints */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default ascending */
          order?: 'ascending' | 'descending';
        };
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseEndpointOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    /** Create endpoint */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['EndpointInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        201: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EndpointOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get endpoint */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EndpointOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    /** Update (or create) endpoint */
    put: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['EndpointUpdateInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EndpointOut'];
          };
        };
        /** @description Default Response */
        201: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EndpointOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    post?: never;
    /** Delete endpoint */
    delete: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Deleted */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    options?: never;
    head?: never;
    /** Patch endpoint */
    patch: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['EndpointPatchInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EndpointOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/secret': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get endpoint signing secret */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EndpointSecretOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/msg': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List messages */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default descending */
          order?: 'ascending' | 'descending';
          /**
           * @description Include the payloads (default false: content is in a list only when asked; a single
           * message shows it by default)
           */
          with_content?: string;
          event_types?: string | string[];
          channel?: string;
          tag?: string;
          before?: string;
          after?: string;
        };
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseMessageOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    /** Create message */
    post: {
      parameters: {
        query?: {
          with_content?: string;
        };
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['MessageInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        202: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['MessageOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        413: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/msg/{msgId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get message */
    get: {
      parameters: {
        query?: {
          with_content?: string;
        };
        header?: never;
        path: {
          appId: string;
          msgId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['MessageOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/attempt/msg/{msgId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List attempts by message */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default descending */
          order?: 'ascending' | 'descending';
          status?: string;
          status_code_class?: string;
          event_types?: string | string[];
          channel?: string;
          tag?: string;
          before?: string;
          after?: string;
          /**
           * @description Include each attempt's stored response body (default false: content is in a list
           * only when asked)
           */
          with_content?: string;
          with_msg?: string;
          endpoint_id?: string;
        };
        header?: never;
        path: {
          appId: string;
          msgId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseMessageAttemptOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/attempt/endpoint/{endpointId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List attempts by endpoint */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default descending */
          order?: 'ascending' | 'descending';
          status?: string;
          status_code_class?: string;
          event_types?: string | string[];
          channel?: string;
          tag?: string;
          before?: string;
          after?: string;
          /**
           * @description Include each attempt's stored response body (default false: content is in a list
           * only when asked)
           */
          with_content?: string;
          with_msg?: string;
          endpoint_id?: string;
        };
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseMessageAttemptOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/msg/{msgId}/attempt/{attemptId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get attempt */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          msgId: string;
          attemptId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['MessageAttemptOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/msg/{msgId}/endpoint/{endpointId}/timeline': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Delivery timeline (Tidings) */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default ascending */
          order?: 'ascending' | 'descending';
        };
        header?: never;
        path: {
          appId: string;
          msgId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['DeliveryTimeline'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/msg/{msgId}/endpoint/{endpointId}/resend': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Resend a message to an endpoint */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          msgId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        202: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/health': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Endpoint health (Tidings) */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': {
              /** @enum {string} */
              status: 'active' | 'paused' | 'disabled';
              statusReason: string | null;
              statusChangedAt: string | null;
              breaker: {
                /** @enum {string} */
                state: 'closed' | 'open' | 'half_open';
                consecutiveFailures: number;
                openUntil: string | null;
                openedInARow: number;
                changedAt: string | null;
              };
              failingSince: string | null;
              lastSuccessAt: string | null;
              throttledUntil: string | null;
              limits: {
                maxInFlight: number | null;
                rateLimit: number | null;
                rateBurst: number | null;
              };
              inFlight: number;
              currentRatePerS: number;
              deliveries: {
                [key: string]: number;
              };
              windows: {
                windowS: number;
                attempts: number;
                succeeded: number;
                failed: number;
                successRatio: number | null;
                p50LatencyMs: number | null;
                p99LatencyMs: number | null;
                redirects: number;
              }[];
              lastRedirect: {
                at: string;
                statusCode: number;
                location: string | null;
              } | null;
              history: {
                kind: string;
                reason: string | null;
                at: string;
              }[];
            };
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/limits': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    /** Set endpoint flow-control limits (Tidings) */
    patch: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': {
            maxInFlight?: number | null;
            rateLimit?: number | null;
            rateBurst?: number | null;
          };
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': {
              /** @enum {string} */
              status: 'active' | 'paused' | 'disabled';
              statusReason: string | null;
              statusChangedAt: string | null;
              breaker: {
                /** @enum {string} */
                state: 'closed' | 'open' | 'half_open';
                consecutiveFailures: number;
                openUntil: string | null;
                openedInARow: number;
                changedAt: string | null;
              };
              failingSince: string | null;
              lastSuccessAt: string | null;
              throttledUntil: string | null;
              limits: {
                maxInFlight: number | null;
                rateLimit: number | null;
                rateBurst: number | null;
              };
              inFlight: number;
              currentRatePerS: number;
              deliveries: {
                [key: string]: number;
              };
              windows: {
                windowS: number;
                attempts: number;
                succeeded: number;
                failed: number;
                successRatio: number | null;
                p50LatencyMs: number | null;
                p99LatencyMs: number | null;
                redirects: number;
              }[];
              lastRedirect: {
                at: string;
                statusCode: number;
                location: string | null;
              } | null;
              history: {
                kind: string;
                reason: string | null;
                at: string;
              }[];
            };
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/breaker/probe': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Probe now: end the breaker's cool-down (Tidings)
     * @description Ends an open breaker's cool-down now, so that exactly one delivery goes next as its probe:
     * success closes the breaker, failure opens it for a new (longer) cool-down. A half-open breaker already has
     * its probe in flight and is left as it is. Appends `breaker_probe_requested` to the health history. 409 when
     * the breaker is closed.
     */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': {
              /** @enum {string} */
              status: 'active' | 'paused' | 'disabled';
              statusReason: string | null;
              statusChangedAt: string | null;
              breaker: {
                /** @enum {string} */
                state: 'closed' | 'open' | 'half_open';
                consecutiveFailures: number;
                openUntil: string | null;
                openedInARow: number;
                changedAt: string | null;
              };
              failingSince: string | null;
              lastSuccessAt: string | null;
              throttledUntil: string | null;
              limits: {
                maxInFlight: number | null;
                rateLimit: number | null;
                rateBurst: number | null;
              };
              inFlight: number;
              currentRatePerS: number;
              deliveries: {
                [key: string]: number;
              };
              windows: {
                windowS: number;
                attempts: number;
                succeeded: number;
                failed: number;
                successRatio: number | null;
                p50LatencyMs: number | null;
                p99LatencyMs: number | null;
                redirects: number;
              }[];
              lastRedirect: {
                at: string;
                statusCode: number;
                location: string | null;
              } | null;
              history: {
                kind: string;
                reason: string | null;
                at: string;
              }[];
            };
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/breaker/close': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Close the breaker (Tidings)
     * @description Closes the endpoint's circuit breaker: its held deliveries are claimed as usual again, and the
     * failure streak and cool-down growth start from zero. Appends `breaker_closed` to the health history, its
     * reason naming who closed it ("closed by the operator", "… a portal token of the application", "… an API key
     * of the application"); a closed breaker is left as it is.
     */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': {
              /** @enum {string} */
              status: 'active' | 'paused' | 'disabled';
              statusReason: string | null;
              statusChangedAt: string | null;
              breaker: {
                /** @enum {string} */
                state: 'closed' | 'open' | 'half_open';
                consecutiveFailures: number;
                openUntil: string | null;
                openedInARow: number;
                changedAt: string | null;
              };
              failingSince: string | null;
              lastSuccessAt: string | null;
              throttledUntil: string | null;
              limits: {
                maxInFlight: number | null;
                rateLimit: number | null;
                rateBurst: number | null;
              };
              inFlight: number;
              currentRatePerS: number;
              deliveries: {
                [key: string]: number;
              };
              windows: {
                windowS: number;
                attempts: number;
                succeeded: number;
                failed: number;
                successRatio: number | null;
                p50LatencyMs: number | null;
                p99LatencyMs: number | null;
                redirects: number;
              }[];
              lastRedirect: {
                at: string;
                statusCode: number;
                location: string | null;
              } | null;
              history: {
                kind: string;
                reason: string | null;
                at: string;
              }[];
            };
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/pause': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Pause an endpoint (Tidings) */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/resume': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Resume an endpoint (Tidings) */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/retry-policy': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Endpoint retry policy (Tidings)
     * @description Tidings only. Each field falls back on its own: the endpoint's policy, then the event type's,
     * then the installation's settings (TIDINGS_RETRY_SCHEDULE, TIDINGS_ATTEMPT_DEADLINE; attempts = the schedule's
     * entries + 1). A change applies to deliveries created after it; a delivery keeps the policy it was created
     * with. A field outside the installation's limits is 422 naming it (TIDINGS_RETRY_POLICY_*, and TIDINGS_LEASE
     * for attemptTimeout).
     */
    get: {
      parameters: {
        query?: {
          /** @description Resolve for messages of this event type (its policy takes part) */
          event_type?: string;
        };
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['RetryPolicyOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    /**
     * Set endpoint retry policy (Tidings)
     * @description Tidings only. Each field falls back on its own: the endpoint's policy, then the event type's,
     * then the installation's settings (TIDINGS_RETRY_SCHEDULE, TIDINGS_ATTEMPT_DEADLINE; attempts = the schedule's
     * entries + 1). A change applies to deliveries created after it; a delivery keeps the policy it was created
     * with. A field outside the installation's limits is 422 naming it (TIDINGS_RETRY_POLICY_*, and TIDINGS_LEASE
     * for attemptTimeout).
     */
    put: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['RetryPolicyInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['RetryPolicyOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    post?: never;
    /**
     * Clear endpoint retry policy (Tidings)
     * @description Tidings only. Each field falls back on its own: the endpoint's policy, then the event type's,
     * then the installation's settings (TIDINGS_RETRY_SCHEDULE, TIDINGS_ATTEMPT_DEADLINE; attempts = the schedule's
     * entries + 1). A change applies to deliveries created after it; a delivery keeps the policy it was created
     * with. A field outside the installation's limits is 422 naming it (TIDINGS_RETRY_POLICY_*, and TIDINGS_LEASE
     * for attemptTimeout).
     */
    delete: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Cleared */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    options?: never;
    head?: never;
    /**
     * Patch endpoint retry policy (Tidings)
     * @description Tidings only. Each field falls back on its own: the endpoint's policy, then the event type's,
     * then the installation's settings (TIDINGS_RETRY_SCHEDULE, TIDINGS_ATTEMPT_DEADLINE; attempts = the schedule's
     * entries + 1). A change applies to deliveries created after it; a delivery keeps the policy it was created
     * with. A field outside the installation's limits is 422 naming it (TIDINGS_RETRY_POLICY_*, and TIDINGS_LEASE
     * for attemptTimeout).
     */
    patch: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['RetryPolicyPatchInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['RetryPolicyOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    trace?: never;
  };
  '/api/v1/event-type/{eventTypeName}/retry-policy': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Event type retry policy (Tidings)
     * @description Tidings only. Each field falls back on its own: the endpoint's policy, then the event type's,
     * then the installation's settings (TIDINGS_RETRY_SCHEDULE, TIDINGS_ATTEMPT_DEADLINE; attempts = the schedule's
     * entries + 1). A change applies to deliveries created after it; a delivery keeps the policy it was created
     * with. A field outside the installation's limits is 422 naming it (TIDINGS_RETRY_POLICY_*, and TIDINGS_LEASE
     * for attemptTimeout).
     */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          eventTypeName: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['RetryPolicyOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    /**
     * Set event type retry policy (Tidings)
     * @description Tidings only. Each field falls back on its own: the endpoint's policy, then the event type's,
     * then the installation's settings (TIDINGS_RETRY_SCHEDULE, TIDINGS_ATTEMPT_DEADLINE; attempts = the schedule's
     * entries + 1). A change applies to deliveries created after it; a delivery keeps the policy it was created
     * with. A field outside the installation's limits is 422 naming it (TIDINGS_RETRY_POLICY_*, and TIDINGS_LEASE
     * for attemptTimeout).
     */
    put: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          eventTypeName: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['RetryPolicyInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['RetryPolicyOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    post?: never;
    /**
     * Clear event type retry policy (Tidings)
     * @description Tidings only. Each field falls back on its own: the endpoint's policy, then the event type's,
     * then the installation's settings (TIDINGS_RETRY_SCHEDULE, TIDINGS_ATTEMPT_DEADLINE; attempts = the schedule's
     * entries + 1). A change applies to deliveries created after it; a delivery keeps the policy it was created
     * with. A field outside the installation's limits is 422 naming it (TIDINGS_RETRY_POLICY_*, and TIDINGS_LEASE
     * for attemptTimeout).
     */
    delete: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          eventTypeName: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Cleared */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    options?: never;
    head?: never;
    /**
     * Patch event type retry policy (Tidings)
     * @description Tidings only. Each field falls back on its own: the endpoint's policy, then the event type's,
     * then the installation's settings (TIDINGS_RETRY_SCHEDULE, TIDINGS_ATTEMPT_DEADLINE; attempts = the schedule's
     * entries + 1). A change applies to deliveries created after it; a delivery keeps the policy it was created
     * with. A field outside the installation's limits is 422 naming it (TIDINGS_RETRY_POLICY_*, and TIDINGS_LEASE
     * for attemptTimeout).
     */
    patch: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          eventTypeName: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['RetryPolicyPatchInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['RetryPolicyOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/auth': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Endpoint receiver auth (Tidings)
     * @description Tidings only (Svix has no receiver authentication). How Tidings authenticates to the receiver:
     * HTTP basic credentials or an OAuth2 client-credentials token (at most one: both set Authorization), and a TLS
     * client certificate. Secrets are stored encrypted and never shown back: GET masks them. PUT replaces the
     * whole; PATCH changes the parts it names and keeps the rest, a secret left out of a part included, null
     * removing a part. mtls needs an https endpoint URL. A change reaches deliveries within
     * TIDINGS_RECEIVER_AUTH_REFRESH. A bad field is 422 naming it.
     */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ReceiverAuthOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    /**
     * Set endpoint receiver auth (Tidings)
     * @description Tidings only (Svix has no receiver authentication). How Tidings authenticates to the receiver:
     * HTTP basic credentials or an OAuth2 client-credentials token (at most one: both set Authorization), and a TLS
     * client certificate. Secrets are stored encrypted and never shown back: GET masks them. PUT replaces the
     * whole; PATCH changes the parts it names and keeps the rest, a secret left out of a part included, null
     * removing a part. mtls needs an https endpoint URL. A change reaches deliveries within
     * TIDINGS_RECEIVER_AUTH_REFRESH. A bad field is 422 naming it.
     */
    put: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['ReceiverAuthInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ReceiverAuthOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    post?: never;
    /**
     * Remove endpoint receiver auth (Tidings)
     * @description Tidings only (Svix has no receiver authentication). How Tidings authenticates to the receiver:
     * HTTP basic credentials or an OAuth2 client-credentials token (at most one: both set Authorization), and a TLS
     * client certificate. Secrets are stored encrypted and never shown back: GET masks them. PUT replaces the
     * whole; PATCH changes the parts it names and keeps the rest, a secret left out of a part included, null
     * removing a part. mtls needs an https endpoint URL. A change reaches deliveries within
     * TIDINGS_RECEIVER_AUTH_REFRESH. A bad field is 422 naming it.
     */
    delete: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Removed */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    options?: never;
    head?: never;
    /**
     * Change parts of endpoint receiver auth (Tidings)
     * @description Tidings only (Svix has no receiver authentication). How Tidings authenticates to the receiver:
     * HTTP basic credentials or an OAuth2 client-credentials token (at most one: both set Authorization), and a TLS
     * client certificate. Secrets are stored encrypted and never shown back: GET masks them. PUT replaces the
     * whole; PATCH changes the parts it names and keeps the rest, a secret left out of a part included, null
     * removing a part. mtls needs an https endpoint URL. A change reaches deliveries within
     * TIDINGS_RECEIVER_AUTH_REFRESH. A bad field is 422 naming it.
     */
    patch: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['ReceiverAuthPatchInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ReceiverAuthOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    trace?: never;
  };
  '/api/v1/api-key': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List API keys (Tidings) */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default ascending */
          order?: 'ascending' | 'descending';
          app_id?: string;
        };
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseApiKeyOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    /** Create API key (Tidings) */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['ApiKeyInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        201: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ApiKeyCreatedOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/api-key/{keyId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Revoke API key (Tidings) */
    delete: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          keyId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/app-portal-access/{appId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Get consumer app portal access */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['AppPortalAccessInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['AppPortalAccessOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/logout': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Logout an app token */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/app/{appId}/expire-all': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Expire all tokens of an application */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['ApplicationTokenExpireInInput'] | null;
        };
      };
      responses: {
        /** @description Default Response */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/me': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Who am I (Tidings) */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['AuthMeOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/filter': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Endpoint payload filter (Tidings)
     * @description Tidings only. A message that does not match the filter makes no delivery for the endpoint; the
     * message lists the endpoints it skipped (…/msg/{msg}/filtered-endpoint). A change applies to messages
     * published after it: deliveries already made stay, and replay-missing does not make what a filter skipped.
     */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EndpointFilterOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    /**
     * Set endpoint payload filter (Tidings)
     * @description Tidings only. A message that does not match the filter makes no delivery for the endpoint; the
     * message lists the endpoints it skipped (…/msg/{msg}/filtered-endpoint). A change applies to messages
     * published after it: deliveries already made stay, and replay-missing does not make what a filter skipped.
     */
    put: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['EndpointFilterInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EndpointFilterOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    post?: never;
    /**
     * Clear endpoint payload filter (Tidings)
     * @description Tidings only. A message that does not match the filter makes no delivery for the endpoint; the
     * message lists the endpoints it skipped (…/msg/{msg}/filtered-endpoint). A change applies to messages
     * published after it: deliveries already made stay, and replay-missing does not make what a filter skipped.
     */
    delete: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Cleared */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/filter/test': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Test a payload filter against a sample message (Tidings)
     * @description Tidings only. Checks the filter as …/endpoint/{ep}/filter does (422 naming the part), writes
     * nothing.
     */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['FilterTestInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['FilterTestOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/msg/{msgId}/filtered-endpoint': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Endpoints a message skipped by their payload filter (Tidings)
     * @description Tidings only. The endpoints whose payload filter the message did not match when it was published
     * (no delivery was made for them), as stored with the message; each endpoint as it is now.
     */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          msgId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['FilteredEndpointsOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/msg/expunge-all-contents': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Expunge all contents (optionally by tag or eventId prefix) */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['ExpungeAllContentsInInput'] | null;
        };
      };
      responses: {
        /** @description Default Response */
        202: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ExpungeAllContentsOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/event-type': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List event types */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default ascending */
          order?: 'ascending' | 'descending';
          include_archived?: string;
          /**
           * @description Include the schemas (default false, as the svix client asks: content is in a list
           * only when asked)
           */
          with_content?: string;
        };
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseEventTypeOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    /** Create event type */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['EventTypeInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        201: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EventTypeOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/event-type/{eventTypeName}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get event type */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          eventTypeName: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EventTypeOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    /** Update (or create) event type */
    put: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          eventTypeName: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['EventTypeUpsertInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EventTypeOut'];
          };
        };
        /** @description Default Response */
        201: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EventTypeOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    post?: never;
    /** Archive (or expunge) event type */
    delete: {
      parameters: {
        query?: {
          expunge?: string;
        };
        header?: never;
        path: {
          eventTypeName: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Archived or deleted */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    options?: never;
    head?: never;
    /** Patch event type */
    patch: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          eventTypeName: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['EventTypePatchInput'];
        };
      };
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EventTypeOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/secret/rotate': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Rotate endpoint signing secret */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['EndpointSecretRotateInInput'];
        };
      };
      responses: {
        /** @description Rotated */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/headers': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get endpoint headers */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EndpointHeadersOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    /** Set endpoint headers */
    put: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['EndpointHeadersInInput'];
        };
      };
      responses: {
        /** @description Set */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    /** Patch endpoint headers */
    patch: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['EndpointHeadersPatchInInput'];
        };
      };
      responses: {
        /** @description Patched */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/stats': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Endpoint stats */
    get: {
      parameters: {
        query?: {
          since?: string;
          until?: string;
        };
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['EndpointStats'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/send-example': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Send an example message to the endpoint */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['EventExampleInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        202: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['MessageOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/msg/{msgId}/content': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Expunge message content */
    delete: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          msgId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Expunged */
        204: {
          headers: {
            [name: string]: unknown;
          };
          content?: never;
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/msg/{msgId}/endpoint': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the destinations of a message */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default ascending */
          order?: 'ascending' | 'descending';
          expanded_statuses?: string;
        };
        header?: never;
        path: {
          appId: string;
          msgId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseMessageEndpointOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/msg': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the messages of an endpoint */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default descending */
          order?: 'ascending' | 'descending';
          status?: string;
          channel?: string;
          tag?: string;
          event_types?: string | string[];
          before?: string;
          after?: string;
          /** @description Include the payloads (default false: content is in a list only when asked) */
          with_content?: string;
          expanded_statuses?: string;
        };
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseEndpointMessageOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/recover': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Recover failed messages */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['RecoverInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        202: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['RecoverOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/replay-missing': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Replay missing messages */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['ReplayInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        202: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['RecoverOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/bulk-replay': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Bulk replay messages */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['BulkReplayInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        202: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['RecoverOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/dead-letter': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List dead letters of every application (Tidings) */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default descending */
          order?: 'ascending' | 'descending';
          event_types?: string | string[];
          before?: string;
          after?: string;
        };
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseDeadLetterOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/dead-letter': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List dead letters of an application (Tidings) */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default descending */
          order?: 'ascending' | 'descending';
          event_types?: string | string[];
          before?: string;
          after?: string;
        };
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseDeadLetterOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/dead-letter': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List dead letters of an endpoint (Tidings) */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default descending */
          order?: 'ascending' | 'descending';
          event_types?: string | string[];
          before?: string;
          after?: string;
        };
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseDeadLetterOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/dead-letter/replay': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Replay dead letters by filter (Tidings) */
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody: {
        content: {
          'application/json': components['schemas']['DeadLetterReplayInInput'];
        };
      };
      responses: {
        /** @description Default Response */
        202: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['RecoverOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        409: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/search/msg': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Search messages (Tidings) */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default descending */
          order?: 'ascending' | 'descending';
          /**
           * @description Required: the window starts after this instant (excluded). A search reads one window
           * of at most TIDINGS_SEARCH_MAX_WINDOW (422 search_unbounded otherwise)
           */
          after?: string;
          /** @description The window ends before this instant (excluded); default now (included) */
          before?: string;
          event_types?: string | string[];
          channel?: string;
          tag?: string;
          /**
           * @description A field of the JSON payload, as dotted keys (`customer.id`; digits also index an
           * array: `items.0.sku`). With payload_value: only messages whose field equals it. Payloads are
           * encrypted at rest, so they are decrypted and compared in the API, at most
           * TIDINGS_SEARCH_PAYLOAD_ROWS / TIDINGS_SEARCH_PAYLOAD_BYTES per request
           */
          payload_field?: string;
          /**
           * @description The value payload_field must equal: a string field by its text; a number, true,
           * false or null by its JSON text as published
           */
          payload_value?: string;
          /** @description Include the payloads (default false) */
          with_content?: string;
        };
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseMessageOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/search/delivery': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Search deliveries (Tidings) */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default descending */
          order?: 'ascending' | 'descending';
          /**
           * @description Required: the window starts after this instant (excluded). A search reads one window
           * of at most TIDINGS_SEARCH_MAX_WINDOW (422 search_unbounded otherwise)
           */
          after?: string;
          /** @description The window ends before this instant (excluded); default now (included) */
          before?: string;
          event_types?: string | string[];
          channel?: string;
          tag?: string;
          /**
           * @description A field of the JSON payload, as dotted keys (`customer.id`; digits also index an
           * array: `items.0.sku`). With payload_value: only messages whose field equals it. Payloads are
           * encrypted at rest, so they are decrypted and compared in the API, at most
           * TIDINGS_SEARCH_PAYLOAD_ROWS / TIDINGS_SEARCH_PAYLOAD_BYTES per request
           */
          payload_field?: string;
          /**
           * @description The value payload_field must equal: a string field by its text; a number, true,
           * false or null by its JSON text as published
           */
          payload_value?: string;
          /**
           * @description pending, leased, succeeded, dead, skipped, canceled (comma-separated or repeated)
           */
          delivery_state?: string | string[];
          /**
           * @description Svix MessageStatus: 0 succeeded, 1 pending, 2 dead, 3 leased, 4 canceled or skipped
           */
          status?: string;
          /** @description The HTTP status class of the last attempt: 0 (none), 100 … 500 */
          status_code_class?: string;
          /** @description The HTTP status of the last attempt, exactly (Tidings): 100 … 599 */
          status_code?: string;
          /** @description One endpoint (id or uid; a deleted one by id) */
          endpoint_id?: string;
        };
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseDeliverySearchOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/endpoint/{endpointId}/undelivered': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** What an endpoint did not get in a window (Tidings) */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default descending */
          order?: 'ascending' | 'descending';
          /**
           * @description Required: the window starts after this instant (excluded). A search reads one window
           * of at most TIDINGS_SEARCH_MAX_WINDOW (422 search_unbounded otherwise)
           */
          after?: string;
          /** @description The window ends before this instant (excluded); default now (included) */
          before?: string;
          event_types?: string | string[];
          channel?: string;
          tag?: string;
          /**
           * @description A field of the JSON payload, as dotted keys (`customer.id`; digits also index an
           * array: `items.0.sku`). With payload_value: only messages whose field equals it. Payloads are
           * encrypted at rest, so they are decrypted and compared in the API, at most
           * TIDINGS_SEARCH_PAYLOAD_ROWS / TIDINGS_SEARCH_PAYLOAD_BYTES per request
           */
          payload_field?: string;
          /**
           * @description The value payload_field must equal: a string field by its text; a number, true,
           * false or null by its JSON text as published
           */
          payload_value?: string;
          /**
           * @description pending, leased, succeeded, dead, skipped, canceled (comma-separated or repeated)
           */
          delivery_state?: string | string[];
          /**
           * @description Svix MessageStatus: 0 succeeded, 1 pending, 2 dead, 3 leased, 4 canceled or skipped
           */
          status?: string;
          /** @description The HTTP status class of the last attempt: 0 (none), 100 … 500 */
          status_code_class?: string;
          /** @description The HTTP status of the last attempt, exactly (Tidings): 100 … 599 */
          status_code?: string;
        };
        header?: never;
        path: {
          appId: string;
          endpointId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseDeliverySearchOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/app/{appId}/search/attempt': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Search attempts to an endpoint (Tidings) */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default descending */
          order?: 'ascending' | 'descending';
          /**
           * @description Required: the window starts after this instant (excluded). A search reads one window
           * of at most TIDINGS_SEARCH_MAX_WINDOW (422 search_unbounded otherwise)
           */
          after?: string;
          /** @description The window ends before this instant (excluded); default now (included) */
          before?: string;
          event_types?: string | string[];
          channel?: string;
          tag?: string;
          /**
           * @description A field of the JSON payload, as dotted keys (`customer.id`; digits also index an
           * array: `items.0.sku`). With payload_value: only messages whose field equals it. Payloads are
           * encrypted at rest, so they are decrypted and compared in the API, at most
           * TIDINGS_SEARCH_PAYLOAD_ROWS / TIDINGS_SEARCH_PAYLOAD_BYTES per request
           */
          payload_field?: string;
          /**
           * @description The value payload_field must equal: a string field by its text; a number, true,
           * false or null by its JSON text as published
           */
          payload_value?: string;
          /** @description Required: attempts are indexed by endpoint (id or uid; a deleted one by id) */
          endpoint_id?: string;
          status?: string;
          status_code_class?: string;
          /** @description The HTTP status the attempt got, exactly (Tidings): 100 … 599 */
          status_code?: string;
          with_msg?: string;
        };
        header?: never;
        path: {
          appId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseMessageAttemptOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/background-task': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List background tasks */
    get: {
      parameters: {
        query?: {
          limit?: string;
          iterator?: string | null;
          /** @description Sort order by id (creation); default descending */
          order?: 'ascending' | 'descending';
          status?: 'running' | 'finished' | 'failed';
          task?: string;
        };
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['ListResponseBackgroundTaskOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/background-task/{taskId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get background task */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: {
          taskId: string;
        };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['BackgroundTaskOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/settings': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Effective configuration, secrets masked (Tidings) */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['SettingsOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/portal/branding': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Application portal branding (Tidings) */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['PortalBrandingOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/stats/overview': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Delivery overview (Tidings) */
    get: {
      parameters: {
        query?: {
          /**
           * @description Application id or uid; absent = the whole installation (operators) or the
           * credential's application
           */
          app_id?: string;
        };
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': {
              /** @description The application covered; null = the whole installation */
              appId: string | null;
              /** @description Deliveries by state */
              deliveries: {
                pending: number;
                leased: number;
                succeeded: number;
                dead: number;
                skipped: number;
                canceled: number;
              };
              backlog: {
                /**
                 * @description Pending deliveries whose due time has come and that no hold of their
                 * endpoint keeps back (they go as soon as a dispatcher has room)
                 */
                dueNow: number;
                /** @description now − due time of the oldest of dueNow, ms; null when none is due */
                oldestDueAgeMs: number | null;
                /** @description Leased deliveries whose lease is live (attempts in flight) */
                leasedInFlight: number;
                /** @description Pending deliveries due later (retries in back-off) */
                scheduledLater: number;
                /**
                 * @description Pending deliveries held back by their endpoint: every one of a paused
                 * endpoint, and those due now whose endpoint's breaker is open or half-open or that a
                 * receiver's Retry-After throttles (the sum of heldBy)
                 */
                held: number;
                /** @description held, by what holds them */
                heldBy: {
                  /** @description Deliveries of paused endpoints */
                  paused: number;
                  /**
                   * @description Due deliveries of endpoints whose breaker is open or half-open (at
                   * most one of each such endpoint goes, as its probe, once the cool-down ends)
                   */
                  breaker: number;
                  /**
                   * @description Due deliveries of endpoints held back by a receiver's Retry-After
                   */
                  throttled: number;
                };
              };
              /** @description Transitions into dead during the last 24 h */
              deadLettersLast24h: number;
              /** @description Endpoints whose breaker is open or half-open */
              openBreakers: {
                count: number;
                /** @description At most 20, oldest breaker change first */
                endpointIds: string[];
              };
              /** @description Background tasks still running */
              runningTasks: number;
            };
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/stats/time-in-state': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Time-in-state over a window (Tidings)
     * @description Read from per-second to per-15-minute rollups of the delivery timeline plus the raw rows not
     * rolled up yet, so it answers in milliseconds at a million timeline rows. Counts, retry rate and the series
     * are exact; p50/p90/p99 are estimated from fixed log-scale histograms, within 4.6 % of the exact figures
     * (exact up to 15 ms). A 7d window starts at the 15-minute roll-up's boundary at or before `until` − 7 days, so
     * it may cover up to 15 minutes more than asked: the answer's `since` (excluded) is 1 ms before that boundary;
     * the shorter windows start exactly `until` − window.
     */
    get: {
      parameters: {
        query?: {
          /** @description 5m (10 s buckets), 1h (1 min buckets), 24h (15 min buckets) or 7d (2 h buckets) */
          window?: '5m' | '1h' | '24h' | '7d';
          /** @description Application id or uid */
          app_id?: string;
          /** @description Endpoint id or uid (with app_id, unless the credential is an application's) */
          endpoint_id?: string;
        };
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': {
              window: string;
              /** @description Start of the window (exclusive), ISO-8601 */
              since: string;
              /** @description End of the window (inclusive), ISO-8601 */
              until: string;
              /** @description Width of one series bucket, ms */
              bucketMs: number;
              appId: string | null;
              endpointId: string | null;
              /** @description Claim instant − due time of each claim of a due delivery, ms */
              queueWaitMs: {
                p50: number | null;
                p90: number | null;
                p99: number | null;
                count: number;
              };
              /** @description Duration of each recorded attempt, ms */
              attemptLatencyMs: {
                p50: number | null;
                p90: number | null;
                p99: number | null;
                count: number;
              };
              /** @description Publish → success of each delivery that succeeded in the window, ms */
              timeToDeliveredMs: {
                p50: number | null;
                p90: number | null;
                p99: number | null;
                count: number;
              };
              attempts: number;
              succeeded: number;
              /** @description Attempts whose outcome was a scheduled retry */
              retriesScheduled: number;
              /** @description retriesScheduled / attempts; null without attempts */
              retryRate: number | null;
              /** @description Transitions into dead */
              deadLetterInflow: number;
              /** @description Claims of an expired lease */
              reclaims: number;
              /** @description Attempts per bucket, oldest first, zero-filled */
              series: {
                /** @description Bucket start, ISO-8601 */
                at: string;
                attempts: number;
                succeeded: number;
                failed: number;
              }[];
            };
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/stats/transport': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Transport and its health (Tidings) */
    get: {
      parameters: {
        query?: never;
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        /** @description Default Response */
        200: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['TransportOut'];
          };
        };
        /** @description Default Response */
        401: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        403: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        404: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        422: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        500: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
        /** @description Default Response */
        503: {
          headers: {
            [name: string]: unknown;
          };
          content: {
            'application/json': components['schemas']['HttpError'];
          };
        };
      };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export type webhooks = Record<string, never>;
export interface components {
  schemas: {
    HttpErrorInput: {
      code: string;
      detail:
        | string
        | {
            loc: (string | number)[];
            msg: string;
            type: string;
          }[];
    };
    ApiKeyInInput: {
      name: string;
      /**
       * @description Application id or uid: the key may act on this application only. Absent = an operator key.
       */
      appId?: string | null;
      /** @description Lifetime in seconds; absent = until revoked */
      expiry?: number | null;
      /** @description A scoped key that may only read (GET) */
      readOnly?: boolean;
    };
    ApiKeyOutInput: {
      id: string;
      name: string;
      /** @enum {string} */
      role: 'admin' | 'app';
      appId: string | null;
      readOnly: boolean;
      /** @description The first characters of the token, to recognise it */
      tokenPrefix: string;
      createdAt: string;
      expiresAt: string | null;
      revokedAt: string | null;
    };
    ApiKeyCreatedOutInput: {
      id: string;
      name: string;
      /** @enum {string} */
      role: 'admin' | 'app';
      appId: string | null;
      readOnly: boolean;
      /** @description The first characters of the token, to recognise it */
      tokenPrefix: string;
      createdAt: string;
      expiresAt: string | null;
      revokedAt: string | null;
      /** @description The Bearer token: shown in this answer only, stored as a SHA-256 hash */
      token: string;
    };
    ApplicationInInput: {
      name: string;
      uid?: string | null;
      /** @description Maximum messages per second; null = unlimited */
      throttleRate?: number | null;
      /** @description Older name of throttleRate */
      rateLimit?: number | null;
      metadata?: {
        [key: string]: string;
      } | null;
    };
    ApplicationPatchInput: {
      name?: string;
      uid?: string | null;
      throttleRate?: number | null;
      rateLimit?: number | null;
      metadata?: {
        [key: string]: string;
      };
    };
    ApplicationOutInput: {
      id: string;
      uid: string | null;
      name: string;
      throttleRate: number | null;
      rateLimit: number | null;
      metadata: {
        [key: string]: string;
      };
      createdAt: string;
      updatedAt: string;
    };
    ListResponseApplicationOutInput: {
      data: components['schemas']['ApplicationOutInput'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    MessageEndpointOutInput: {
      id: string;
      status: number;
      statusText: string;
      nextAttempt: string | null;
      url: string;
      description: string;
      throttleRate: number | null;
      uid: string | null;
      disabled: boolean;
      eventTypes: string[] | null;
      channels: string[] | null;
      createdAt: string;
      updatedAt: string;
      deliveryState: string;
      /**
       * @description What holds this pending delivery back: the endpoint's pause, its circuit breaker (open, or
       * half-open awaiting its probe), or a receiver's Retry-After throttle; null = not held (it goes at
       * nextAttempt)
       */
      heldBy: ('paused' | 'breaker' | 'throttled') | null;
      /**
       * @description When the hold ends (the breaker's cool-down or the throttle), ISO-8601; null when held with
       * no set end (paused until resumed; a breaker awaiting its probe's outcome) or not held
       */
      heldUntil: string | null;
    };
    ListResponseMessageEndpointOutInput: {
      data: components['schemas']['MessageEndpointOutInput'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    EndpointMessageOutInput: {
      status: number;
      statusText: string;
      nextAttempt: string | null;
      id: string;
      eventId: string | null;
      eventType: string;
      payload: unknown;
      channels: string[] | null;
      tags: string[] | null;
      timestamp: string;
      deliveryState: string;
      /**
       * @description What holds this pending delivery back: the endpoint's pause, its circuit breaker (open, or
       * half-open awaiting its probe), or a receiver's Retry-After throttle; null = not held (it goes at
       * nextAttempt)
       */
      heldBy: ('paused' | 'breaker' | 'throttled') | null;
      /**
       * @description When the hold ends (the breaker's cool-down or the throttle), ISO-8601; null when held with
       * no set end (paused until resumed; a breaker awaiting its probe's outcome) or not held
       */
      heldUntil: string | null;
    };
    ListResponseEndpointMessageOutInput: {
      data: components['schemas']['EndpointMessageOutInput'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    DeadLetterOutInput: {
      /** @description The application of the message */
      appId: string;
      msgId: string;
      endpointId: string;
      eventType: string;
      msgTimestamp: string;
      /** @description exhausted, gone, lease_lost_repeatedly, … */
      reason: string | null;
      attemptCount: number;
      lastStatusCode: number | null;
      lastErrorKind: string | null;
      lastAttemptAt: string | null;
      deadAt: string;
    };
    ListResponseDeadLetterOutInput: {
      data: components['schemas']['DeadLetterOutInput'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    MessageAttemptOutInput: {
      id: string;
      msgId: string;
      endpointId: string;
      url: string;
      response: string;
      responseStatusCode: number;
      responseDurationMs: number;
      status: number;
      statusText: string;
      triggerType: number;
      timestamp: string;
      attemptNumber: number;
      errorKind: string | null;
      msg?: {
        id: string;
        eventId: string | null;
        eventType: string;
        payload: unknown;
        channels: string[] | null;
        tags: string[] | null;
        timestamp: string;
      };
      operatorDetail?: {
        [key: string]: unknown;
      } | null;
    };
    ListResponseMessageAttemptOutInput: {
      data: components['schemas']['MessageAttemptOutInput'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    DeliveryTimelineEntryInput: {
      id: string;
      state: string;
      /**
       * @description The dispatcher that held the lease (its host name); null for a credential scoped to one
       * application
       */
      dispatcherId: string | null;
      /** @description The lease's fencing token; null for a credential scoped to one application */
      fencingToken: string | null;
      statusCode: number | null;
      latencyMs: number | null;
      errorKind: string | null;
      reason: string | null;
      at: string;
    };
    DeliveryTimelineInput: {
      deliveryState: string;
      attemptCount: number;
      nextAttemptAt: string | null;
      /**
       * @description What holds this pending delivery back: the endpoint's pause, its circuit breaker (open, or
       * half-open awaiting its probe), or a receiver's Retry-After throttle; null = not held (it goes at
       * nextAttempt)
       */
      heldBy: ('paused' | 'breaker' | 'throttled') | null;
      /**
       * @description When the hold ends (the breaker's cool-down or the throttle), ISO-8601; null when held with
       * no set end (paused until resumed; a breaker awaiting its probe's outcome) or not held
       */
      heldUntil: string | null;
      deadReason: string | null;
      data: components['schemas']['DeliveryTimelineEntryInput'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    AppPortalAccessInInput: {
      /** @description Created (with this uid) when the application does not exist */
      application?: components['schemas']['ApplicationInInput'] | null;
      /** @description Token lifetime in seconds; default TIDINGS_APP_PORTAL_TOKEN_TTL */
      expiry?: number | null;
      /** @description ViewBase only (Svix: deprecated in favour of capabilities) */
      readOnly?: boolean | null;
      /** @description Stored with the token; GET /api/v1/auth/me returns them */
      featureFlags?: string[] | null;
      /** @description Stored with the token; expire-all with sessionIds ends only these sessions' tokens */
      sessionId?: string | null;
      /**
       * @description One or more of ViewBase, ViewEndpointSecret, ManageEndpointSecret, ManageTransformations,
       * CreateAttempts, ManageEndpoint (ViewBase required); absent = all
       */
      capabilities?: string[] | null;
    };
    AppPortalAccessOutInput: {
      url: string;
      token: string;
    };
    ApplicationTokenExpireInInput: {
      expiry?: number | null;
      /**
       * @description Only the portal tokens issued with one of these session ids; absent or empty = every token
       */
      sessionIds?: string[] | null;
    };
    AuthMeOutInput: {
      /**
       * @description admin token, operator API key, application key, or app-portal token
       * @enum {string}
       */
      kind: 'admin' | 'operator_key' | 'app_key' | 'app_portal';
      /** @description The application a scoped credential acts on */
      appId?: string;
      /** @description What it may do (the operator holds every capability) */
      capabilities: (
        | 'ViewBase'
        | 'ViewEndpointSecret'
        | 'ManageEndpointSecret'
        | 'ManageTransformations'
        | 'CreateAttempts'
        | 'ManageEndpoint'
        | 'ManageMessages'
      )[];
      /** @description ViewBase only */
      readOnly: boolean;
      /** @description Svix sessionId the portal token was issued with */
      sessionId?: string;
      /** @description Svix featureFlags the portal token was issued with */
      featureFlags: string[];
      /** @description When the credential stops working (RFC 3339), null = until revoked */
      expiresAt: string | null;
    };
    ExpungeAllContentsInInput: {
      /** @description Only messages carrying this tag (Tidings) */
      tag?: string | null;
      /** @description Only messages whose eventId starts with this (Tidings) */
      eventIdPrefix?: string | null;
    };
    ExpungeAllContentsOutInput: {
      id: string;
      /** @enum {string} */
      status: 'running' | 'finished' | 'failed';
      task: string;
      updatedAt: string;
    };
    EndpointInInput: {
      /** @description http(s) URL; addresses refused by the egress policy answer 422 url_not_allowed */
      url: string;
      description?: string | null;
      uid?: string | null;
      disabled?: boolean | null;
      eventTypes?: string[] | null;
      filterTypes?: string[] | null;
      channels?: string[] | null;
      secret?: string | null;
      metadata?: {
        [key: string]: string;
      } | null;
      /** @description Custom static headers sent with every request */
      headers?: {
        [key: string]: string;
      } | null;
      throttleRate?: number | null;
      rateLimit?: number | null;
      version?: number | null;
    };
    EndpointUpdateInput: {
      /** @description http(s) URL; addresses refused by the egress policy answer 422 url_not_allowed */
      url: string;
      description?: string | null;
      uid?: string | null;
      disabled?: boolean | null;
      eventTypes?: string[] | null;
      filterTypes?: string[] | null;
      channels?: string[] | null;
      metadata?: {
        [key: string]: string;
      } | null;
      /** @description Custom static headers sent with every request */
      headers?: {
        [key: string]: string;
      } | null;
      throttleRate?: number | null;
      rateLimit?: number | null;
      version?: number | null;
    };
    EndpointPatchInput: {
      /** @description http(s) URL; addresses refused by the egress policy answer 422 url_not_allowed */
      url?: string;
      description?: string;
      uid?: string | null;
      disabled?: boolean;
      eventTypes?: string[] | null;
      filterTypes?: string[] | null;
      channels?: string[] | null;
      metadata?: {
        [key: string]: string;
      };
      headers?: {
        [key: string]: string;
      } | null;
      throttleRate?: number | null;
      rateLimit?: number | null;
      version?: number;
    };
    EndpointOutInput: {
      id: string;
      uid: string | null;
      url: string;
      description: string;
      version: number;
      disabled: boolean;
      eventTypes: string[] | null;
      filterTypes: string[] | null;
      channels: string[] | null;
      throttleRate: number | null;
      rateLimit: number | null;
      metadata: {
        [key: string]: string;
      };
      headers: {
        [key: string]: string;
      };
      createdAt: string;
      updatedAt: string;
    };
    ListResponseEndpointOutInput: {
      data: components['schemas']['EndpointOutInput'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    EndpointSecretOutInput: {
      key: string;
    };
    TransformationsParamsInput: {
      /** @description Delivered byte for byte (UTF-8) instead of payload */
      rawPayload: string;
      /** @description Only content-type: the raw body's content type (default text/plain) */
      headers?: {
        'content-type'?: string;
      } | null;
    };
    MessageInInput: {
      eventType: string;
      eventId?: string | null;
      /** @description A JSON object; delivered byte for byte */
      payload: unknown;
      channels?: string[] | null;
      tags?: string[] | null;
      payloadRetentionHours?: number | null;
      /** @description Days; mutually exclusive with payloadRetentionHours */
      payloadRetentionPeriod?: number | null;
      application?: components['schemas']['ApplicationInInput'] | null;
      transformationsParams?: components['schemas']['TransformationsParamsInput'] | null;
      deliverAt?: string | null;
    };
    MessageOutInput: {
      id: string;
      eventId: string | null;
      eventType: string;
      payload: unknown;
      channels: string[] | null;
      tags: string[] | null;
      timestamp: string;
      deliverAt: string | null;
    };
    ListResponseMessageOutInput: {
      data: components['schemas']['MessageOutInput'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    RetryPolicyInInput: {
      /**
       * @description Delay after each failed attempt (ms, or "5s", "30m", "2h"…); past its end the last delay
       * repeats
       */
      schedule?: (number | string)[] | null;
      /** @description Overall deadline of one attempt (ms, or "5s"…); TIDINGS_LEASE must exceed it plus 1 s */
      attemptTimeout?: (number | string) | null;
      /** @description Attempts in all, the first included (1 to TIDINGS_RETRY_POLICY_MAX_ATTEMPTS) */
      maxAttempts?: number | null;
    };
    RetryPolicyPatchInput: {
      /**
       * @description Delay after each failed attempt (ms, or "5s", "30m", "2h"…); past its end the last delay
       * repeats
       */
      schedule?: (number | string)[] | null;
      /** @description Overall deadline of one attempt (ms, or "5s"…); TIDINGS_LEASE must exceed it plus 1 s */
      attemptTimeout?: (number | string) | null;
      /** @description Attempts in all, the first included (1 to TIDINGS_RETRY_POLICY_MAX_ATTEMPTS) */
      maxAttempts?: number | null;
    };
    RetryPolicyOutInput: {
      policy: {
        schedule: number[] | null;
        attemptTimeout: number | null;
        maxAttempts: number | null;
      };
      /** @description The event type whose policy took part in `effective` (endpoints only) */
      eventType?: string | null;
      effective: {
        schedule: number[];
        attemptTimeout: number;
        maxAttempts: number;
        /**
         * @description Where each field came from: endpoint, eventType, installation (the settings), or
         * schedule (maxAttempts: the schedule's entries + 1)
         */
        sources: {
          /** @enum {string} */
          schedule: 'endpoint' | 'eventType' | 'installation' | 'schedule';
          /** @enum {string} */
          attemptTimeout: 'endpoint' | 'eventType' | 'installation' | 'schedule';
          /** @enum {string} */
          maxAttempts: 'endpoint' | 'eventType' | 'installation' | 'schedule';
        };
      };
    };
    ReceiverAuthInInput: {
      /** @description HTTP basic credentials, sent as Authorization: Basic */
      basic?: {
        /** @description The user id (no ":", RFC 7617) */
        username: string;
        /** @description Never shown back: GET shows a masked hint */
        password: string;
      } | null;
      /** @description OAuth2 client credentials; the token is sent as Authorization: Bearer */
      oauth2?: {
        /**
         * @description The token endpoint: https (http only to a literal private address that
         * TIDINGS_EGRESS_ALLOWLIST opens)
         */
        tokenUrl: string;
        clientId: string;
        /** @description Sent with HTTP basic client authentication; never shown back */
        clientSecret: string;
        scope?: string | null;
        /** @description Sent as the `audience` form field when set */
        audience?: string | null;
      } | null;
      /** @description A TLS client certificate for this endpoint's connections */
      mtls?: {
        /** @description PEM: the client certificate, then any intermediates (with key) */
        certificate?: string | null;
        /** @description PEM, unencrypted: the private key of the certificate; never shown back */
        key?: string | null;
        /**
         * @description PEM: the CA bundle the receiver's certificate must chain to, instead of the system's
         * roots
         */
        ca?: string | null;
      } | null;
    };
    ReceiverAuthPatchInput: {
      /** @description Left out: kept. null: removed. A field left out keeps the stored one (password included) */
      basic?: {
        /** @description The user id (no ":", RFC 7617) */
        username?: string;
        /** @description Never shown back: GET shows a masked hint */
        password?: string;
      } | null;
      /**
       * @description Left out: kept. null: removed. A field left out keeps the stored one (clientSecret included)
       */
      oauth2?: {
        /**
         * @description The token endpoint: https (http only to a literal private address that
         * TIDINGS_EGRESS_ALLOWLIST opens)
         */
        tokenUrl?: string;
        clientId?: string;
        /** @description Sent with HTTP basic client authentication; never shown back */
        clientSecret?: string;
        scope?: string | null;
        /** @description Sent as the `audience` form field when set */
        audience?: string | null;
      } | null;
      /**
       * @description Left out: kept. null: removed. A field left out keeps the stored one (key included); null
       * removes it
       */
      mtls?: {
        /** @description PEM: the client certificate, then any intermediates (with key) */
        certificate?: string | null;
        /** @description PEM, unencrypted: the private key of the certificate; never shown back */
        key?: string | null;
        /**
         * @description PEM: the CA bundle the receiver's certificate must chain to, instead of the system's
         * roots
         */
        ca?: string | null;
      } | null;
    };
    ReceiverAuthOutInput: {
      basic: {
        username: string;
        /** @description Masked hint */
        password: string;
      } | null;
      oauth2: {
        tokenUrl: string;
        clientId: string;
        /** @description Masked hint */
        clientSecret: string;
        scope: string | null;
        audience: string | null;
      } | null;
      mtls: {
        certificate: {
          subject: string;
          issuer: string;
          validTo: string;
          fingerprint256: string;
        } | null;
        /** @description Masked */
        key: string | null;
        ca:
          | {
              subject: string;
              issuer: string;
              validTo: string;
              fingerprint256: string;
            }[]
          | null;
      } | null;
      /** @description Changes at every PUT; null when nothing is set */
      version: string | null;
    };
    EndpointFilterInInput: {
      /**
       * @description A JSON match over the message (docs/reference/api.md, "Payload filters"): field names
       * (eventType, eventId, channels, tags, payload, then the payload's own fields, nested) with a value to
       * equal or an object of operators: $eq, $neq, $gt, $gte, $lt, $lte, $in, $nin, $exists, and $and, $or,
       * $not. Bounded by TIDINGS_FILTER_MAX_BYTES, _DEPTH, _NODES and _PATH; a wrong part is 422 naming it under
       * body.filter.
       */
      filter: {
        [key: string]: unknown;
      };
    };
    EndpointFilterOutInput: {
      filter: {
        [key: string]: unknown;
      } | null;
    };
    FilterSampleMessageInput: {
      eventType: string;
      eventId?: string | null;
      channels?: string[] | null;
      tags?: string[] | null;
      /** @description The JSON payload; absent = a raw message (payload conditions fail) */
      payload?: unknown;
    };
    FilterTestInInput: {
      /**
       * @description A JSON match over the message (docs/reference/api.md, "Payload filters"): field names
       * (eventType, eventId, channels, tags, payload, then the payload's own fields, nested) with a value to
       * equal or an object of operators: $eq, $neq, $gt, $gte, $lt, $lte, $in, $nin, $exists, and $and, $or,
       * $not. Bounded by TIDINGS_FILTER_MAX_BYTES, _DEPTH, _NODES and _PATH; a wrong part is 422 naming it under
       * body.filter.
       */
      filter: {
        [key: string]: unknown;
      };
      message: components['schemas']['FilterSampleMessageInput'];
    };
    FilterTestOutInput: {
      /** @description The message would be delivered to an endpoint with this filter */
      matches: boolean;
    };
    FilteredEndpointsOutInput: {
      data: {
        endpointId: string;
        /** @description Null: the endpoint was deleted since */
        url: string | null;
        description: string | null;
      }[];
    };
    RecoverInInput: {
      /**
       * Format: date-time
       * @description Messages created at or after this instant
       */
      since: string;
      /** @description Messages created before this instant (absent = no upper bound) */
      until?: string | null;
    };
    ReplayInInput: {
      /**
       * Format: date-time
       * @description Messages created at or after this instant
       */
      since: string;
      /** @description Messages created before this instant (absent = no upper bound) */
      until?: string | null;
    };
    BulkReplayInInput: {
      /**
       * Format: date-time
       * @description Messages created at or after this instant
       */
      since: string;
      /** @description Messages created before this instant (absent = no upper bound) */
      until?: string | null;
      eventTypes?: string[] | null;
      channel?: string | null;
      tag?: string | null;
      status?: number | null;
      statusCodeClass?: number | null;
    };
    DeadLetterReplayInInput: {
      /**
       * Format: date-time
       * @description Messages created at or after this instant
       */
      since: string;
      /** @description Messages created before this instant (absent = no upper bound) */
      until?: string | null;
      /** @description One endpoint (id or uid); absent = every endpoint of the application */
      endpointId?: string | null;
      eventTypes?: string[] | null;
    };
    RecoverOutInput: {
      id: string;
      /** @enum {string} */
      status: 'running' | 'finished' | 'failed';
      /** @description endpoint.recover, endpoint.replay, endpoint.bulk-replay, dead-letter.replay (Tidings) */
      task: string;
      updatedAt: string;
      /**
       * @description Progress of a replay task: messagesSent (queued to be sent again), scanned, alreadyQueued,
       * expunged, unavailable (endpoint deleted or disabled), error (why it failed); for a task of one endpoint,
       * held (its pending deliveries in the window that wait behind the endpoint rather than their schedule: a
       * recover selects dead letters only, so it neither sends these again nor counts them as queued; counted
       * when the task starts and again when it finishes), heldBy ({paused, breaker, throttled}: held by what
       * holds them) and heldUntil (ISO-8601, the latest end of those holds that has one; null when none has) —
       * null for a task over a whole application
       */
      data: {
        [key: string]: unknown;
      };
    };
    BackgroundTaskOutInput: {
      id: string;
      /** @enum {string} */
      status: 'running' | 'finished' | 'failed';
      task: string;
      /**
       * @description Progress of a replay task: messagesSent (queued to be sent again), scanned, alreadyQueued,
       * expunged, unavailable (endpoint deleted or disabled), error (why it failed); for a task of one endpoint,
       * held (its pending deliveries in the window that wait behind the endpoint rather than their schedule: a
       * recover selects dead letters only, so it neither sends these again nor counts them as queued; counted
       * when the task starts and again when it finishes), heldBy ({paused, breaker, throttled}: held by what
       * holds them) and heldUntil (ISO-8601, the latest end of those holds that has one; null when none has) —
       * null for a task over a whole application
       */
      data: {
        [key: string]: unknown;
      };
      updatedAt: string;
    };
    ListResponseBackgroundTaskOutInput: {
      data: components['schemas']['BackgroundTaskOutInput'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    DeliverySearchOutInput: {
      msgId: string;
      eventId: string | null;
      eventType: string;
      channels: string[] | null;
      tags: string[] | null;
      msgTimestamp: string;
      endpointId: string;
      /** @description pending, leased, succeeded, dead, skipped, canceled */
      deliveryState: string;
      /** @description Svix MessageStatus: 0 success, 1 pending, 2 fail, 3 sending, 4 canceled (skipped too) */
      status: number;
      statusText: string;
      /**
       * @description Why the delivery is in its state: the reason of its latest timeline row
       * (docs/reference/timeline.md), e.g. endpoint_disabled (skipped), endpoint_deleted (canceled), exhausted /
       * gone (dead), retry_scheduled (pending)
       */
      reason: string | null;
      /** @description When it entered its state (that row's instant) */
      stateChangedAt: string | null;
      attemptCount: number;
      lastStatusCode: number | null;
      lastErrorKind: string | null;
      lastAttemptAt: string | null;
      nextAttempt: string | null;
      /**
       * @description What holds this pending delivery back: the endpoint's pause, its circuit breaker (open, or
       * half-open awaiting its probe), or a receiver's Retry-After throttle; null = not held (it goes at
       * nextAttempt)
       */
      heldBy: ('paused' | 'breaker' | 'throttled') | null;
      /**
       * @description When the hold ends (the breaker's cool-down or the throttle), ISO-8601; null when held with
       * no set end (paused until resumed; a breaker awaiting its probe's outcome) or not held
       */
      heldUntil: string | null;
    };
    ListResponseDeliverySearchOutInput: {
      data: components['schemas']['DeliverySearchOutInput'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    EndpointSecretRotateInInput: {
      /** @description whsec_ + base64 of 24–64 bytes (or the bare base64); omitted = generated */
      key?: string | null;
      /** @description How long the previous secret still signs, 0–604800 s */
      gracePeriodSeconds?: number | null;
    };
    EndpointHeadersInInput: {
      headers: {
        [key: string]: string;
      };
    };
    EndpointHeadersPatchInInput: {
      headers: {
        [key: string]: string | null;
      };
      deleteHeaders?: string[] | null;
    };
    EndpointHeadersOutInput: {
      headers: {
        [key: string]: string;
      };
      sensitive: string[];
    };
    EndpointStatsInput: {
      success: number;
      pending: number;
      sending: number;
      fail: number;
      canceled: number;
      skipped: number;
    };
    EventExampleInInput: {
      eventType: string;
      /** @description Which entry of the schema's `examples` (default 0) */
      exampleIndex?: number | null;
    };
    EventTypeInInput: {
      name: string;
      description: string;
      archived?: boolean | null;
      deprecated?: boolean | null;
      schemas?: {
        [key: string]: unknown;
      } | null;
      groupName?: string | null;
      featureFlags?: string[] | null;
      featureFlag?: string | null;
    };
    EventTypeUpsertInInput: {
      description: string;
      archived?: boolean | null;
      deprecated?: boolean | null;
      schemas?: {
        [key: string]: unknown;
      } | null;
      groupName?: string | null;
      featureFlags?: string[] | null;
      featureFlag?: string | null;
    };
    EventTypePatchInput: {
      description?: string;
      archived?: boolean;
      deprecated?: boolean;
      schemas?: {
        [key: string]: unknown;
      } | null;
      groupName?: string | null;
      featureFlags?: string[] | null;
      featureFlag?: string | null;
    };
    EventTypeOutInput: {
      name: string;
      description: string;
      archived: boolean;
      deprecated: boolean;
      schemas: {
        [key: string]: unknown;
      } | null;
      groupName: string | null;
      featureFlags: string[] | null;
      featureFlag: string | null;
      createdAt: string;
      updatedAt: string;
    };
    ListResponseEventTypeOutInput: {
      data: components['schemas']['EventTypeOutInput'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    SettingOutInput: {
      /** @description Name in the configuration (camelCase) */
      name: string;
      /** @description Environment variable */
      env: string;
      /**
       * @description Effective value as text (secrets masked; in URLs the password and secret query parameters
       * such as password, sslpassword, token, key masked); null = unset
       */
      value: string | null;
      /** @description The default as written in the configuration reference (e.g. `5s`); null = unset */
      defaultValue: string | null;
      /**
       * @description The effective value equals the default once both are parsed (so `5000` ms and `5s` agree)
       */
      isDefault: boolean;
      unit: string;
      description: string;
      secret: boolean;
    };
    SettingsOutInput: {
      data: components['schemas']['SettingOutInput'][];
    };
    PortalBrandingOutInput: {
      name: string;
      logoUrl: string | null;
      /** @description #rrggbb */
      accentColor: string;
    };
    TransportOutInput: {
      /**
       * @description TIDINGS_TRANSPORT: postgres (the claim over the delivery rows), rabbitmq or nats
       * @enum {string}
       */
      transport: 'postgres' | 'rabbitmq' | 'nats';
      /**
       * @description postgres: connected while this process is ready (its database answers), else disconnected. A
       * broker: this process's broker connection (disconnected = reconnecting with back-off; stopped = shut
       * down); null when this process holds none (an API process without a dispatcher: each dispatcher reports
       * its own on /readyz)
       */
      state: ('connecting' | 'connected' | 'disconnected' | 'stopped') | null;
      /**
       * @description Messages in the broker; null for postgres, without this process's connection, or while it is
       * down
       */
      depth: {
        /** @description Published and not yet handed to a consumer, over every shard */
        waiting: number;
        /** @description Dead-lettered by the broker and not yet read, when known */
        deadLetters: number | null;
      } | null;
      /**
       * @description Since this process started, from its metrics (docs/reference/metrics.md); null for postgres
       * or without this process's broker connection
       */
      counts: {
        /** @description Delivery ids the broker confirmed (the sweep included) */
        published: number;
        /** @description Delivery ids published again by the sweep (their message was lost) */
        swept: number;
        /** @description Delivery ids the broker did not confirm (published again by a later round) */
        publishFailed: number;
        /** @description Messages received that the broker had delivered before */
        redelivered: number;
        /** @description Messages the broker dead-lettered */
        deadLettered: number;
        /** @description Times the topology was declared again because a queue had gone */
        topologyRestored: number;
      } | null;
    };
    ListResponseApiKeyOutInput: {
      data: components['schemas']['ApiKeyOutInput'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    HttpError: {
      code: string;
      detail:
        | string
        | {
            loc: (string | number)[];
            msg: string;
            type: string;
          }[];
    };
    ApiKeyIn: {
      name: string;
      /**
       * @description Application id or uid: the key may act on this application only. Absent = an operator key.
       */
      appId?: string | null;
      /** @description Lifetime in seconds; absent = until revoked */
      expiry?: number | null;
      /** @description A scoped key that may only read (GET) */
      readOnly?: boolean;
    };
    ApiKeyOut: {
      id: string;
      name: string;
      /** @enum {string} */
      role: 'admin' | 'app';
      appId: string | null;
      readOnly: boolean;
      /** @description The first characters of the token, to recognise it */
      tokenPrefix: string;
      createdAt: string;
      expiresAt: string | null;
      revokedAt: string | null;
    };
    ApiKeyCreatedOut: {
      id: string;
      name: string;
      /** @enum {string} */
      role: 'admin' | 'app';
      appId: string | null;
      readOnly: boolean;
      /** @description The first characters of the token, to recognise it */
      tokenPrefix: string;
      createdAt: string;
      expiresAt: string | null;
      revokedAt: string | null;
      /** @description The Bearer token: shown in this answer only, stored as a SHA-256 hash */
      token: string;
    };
    ApplicationIn: {
      name: string;
      uid?: string | null;
      /** @description Maximum messages per second; null = unlimited */
      throttleRate?: number | null;
      /** @description Older name of throttleRate */
      rateLimit?: number | null;
      metadata?: {
        [key: string]: string;
      } | null;
    };
    ApplicationPatch: {
      name?: string;
      uid?: string | null;
      throttleRate?: number | null;
      rateLimit?: number | null;
      metadata?: {
        [key: string]: string;
      };
    };
    ApplicationOut: {
      id: string;
      uid: string | null;
      name: string;
      throttleRate: number | null;
      rateLimit: number | null;
      metadata: {
        [key: string]: string;
      };
      createdAt: string;
      updatedAt: string;
    };
    ListResponseApplicationOut: {
      data: components['schemas']['ApplicationOut'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    MessageEndpointOut: {
      id: string;
      status: number;
      statusText: string;
      nextAttempt: string | null;
      url: string;
      description: string;
      throttleRate: number | null;
      uid: string | null;
      disabled: boolean;
      eventTypes: string[] | null;
      channels: string[] | null;
      createdAt: string;
      updatedAt: string;
      deliveryState: string;
      /**
       * @description What holds this pending delivery back: the endpoint's pause, its circuit breaker (open, or
       * half-open awaiting its probe), or a receiver's Retry-After throttle; null = not held (it goes at
       * nextAttempt)
       */
      heldBy: ('paused' | 'breaker' | 'throttled') | null;
      /**
       * @description When the hold ends (the breaker's cool-down or the throttle), ISO-8601; null when held with
       * no set end (paused until resumed; a breaker awaiting its probe's outcome) or not held
       */
      heldUntil: string | null;
    };
    ListResponseMessageEndpointOut: {
      data: components['schemas']['MessageEndpointOut'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    EndpointMessageOut: {
      status: number;
      statusText: string;
      nextAttempt: string | null;
      id: string;
      eventId: string | null;
      eventType: string;
      payload: unknown;
      channels: string[] | null;
      tags: string[] | null;
      timestamp: string;
      deliveryState: string;
      /**
       * @description What holds this pending delivery back: the endpoint's pause, its circuit breaker (open, or
       * half-open awaiting its probe), or a receiver's Retry-After throttle; null = not held (it goes at
       * nextAttempt)
       */
      heldBy: ('paused' | 'breaker' | 'throttled') | null;
      /**
       * @description When the hold ends (the breaker's cool-down or the throttle), ISO-8601; null when held with
       * no set end (paused until resumed; a breaker awaiting its probe's outcome) or not held
       */
      heldUntil: string | null;
    };
    ListResponseEndpointMessageOut: {
      data: components['schemas']['EndpointMessageOut'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    DeadLetterOut: {
      /** @description The application of the message */
      appId: string;
      msgId: string;
      endpointId: string;
      eventType: string;
      msgTimestamp: string;
      /** @description exhausted, gone, lease_lost_repeatedly, … */
      reason: string | null;
      attemptCount: number;
      lastStatusCode: number | null;
      lastErrorKind: string | null;
      lastAttemptAt: string | null;
      deadAt: string;
    };
    ListResponseDeadLetterOut: {
      data: components['schemas']['DeadLetterOut'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    MessageAttemptOut: {
      id: string;
      msgId: string;
      endpointId: string;
      url: string;
      response: string;
      responseStatusCode: number;
      responseDurationMs: number;
      status: number;
      statusText: string;
      triggerType: number;
      timestamp: string;
      attemptNumber: number;
      errorKind: string | null;
      msg?: {
        id: string;
        eventId: string | null;
        eventType: string;
        payload: unknown;
        channels: string[] | null;
        tags: string[] | null;
        timestamp: string;
      };
      operatorDetail?: {
        [key: string]: unknown;
      } | null;
    };
    ListResponseMessageAttemptOut: {
      data: components['schemas']['MessageAttemptOut'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    DeliveryTimelineEntry: {
      id: string;
      state: string;
      /**
       * @description The dispatcher that held the lease (its host name); null for a credential scoped to one
       * application
       */
      dispatcherId: string | null;
      /** @description The lease's fencing token; null for a credential scoped to one application */
      fencingToken: string | null;
      statusCode: number | null;
      latencyMs: number | null;
      errorKind: string | null;
      reason: string | null;
      at: string;
    };
    DeliveryTimeline: {
      deliveryState: string;
      attemptCount: number;
      nextAttemptAt: string | null;
      /**
       * @description What holds this pending delivery back: the endpoint's pause, its circuit breaker (open, or
       * half-open awaiting its probe), or a receiver's Retry-After throttle; null = not held (it goes at
       * nextAttempt)
       */
      heldBy: ('paused' | 'breaker' | 'throttled') | null;
      /**
       * @description When the hold ends (the breaker's cool-down or the throttle), ISO-8601; null when held with
       * no set end (paused until resumed; a breaker awaiting its probe's outcome) or not held
       */
      heldUntil: string | null;
      deadReason: string | null;
      data: components['schemas']['DeliveryTimelineEntry'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    AppPortalAccessIn: {
      /** @description Created (with this uid) when the application does not exist */
      application?: components['schemas']['ApplicationIn'] | null;
      /** @description Token lifetime in seconds; default TIDINGS_APP_PORTAL_TOKEN_TTL */
      expiry?: number | null;
      /** @description ViewBase only (Svix: deprecated in favour of capabilities) */
      readOnly?: boolean | null;
      /** @description Stored with the token; GET /api/v1/auth/me returns them */
      featureFlags?: string[] | null;
      /** @description Stored with the token; expire-all with sessionIds ends only these sessions' tokens */
      sessionId?: string | null;
      /**
       * @description One or more of ViewBase, ViewEndpointSecret, ManageEndpointSecret, ManageTransformations,
       * CreateAttempts, ManageEndpoint (ViewBase required); absent = all
       */
      capabilities?: string[] | null;
    };
    AppPortalAccessOut: {
      url: string;
      token: string;
    };
    ApplicationTokenExpireIn: {
      expiry?: number | null;
      /**
       * @description Only the portal tokens issued with one of these session ids; absent or empty = every token
       */
      sessionIds?: string[] | null;
    };
    AuthMeOut: {
      /**
       * @description admin token, operator API key, application key, or app-portal token
       * @enum {string}
       */
      kind: 'admin' | 'operator_key' | 'app_key' | 'app_portal';
      /** @description The application a scoped credential acts on */
      appId?: string;
      /** @description What it may do (the operator holds every capability) */
      capabilities: (
        | 'ViewBase'
        | 'ViewEndpointSecret'
        | 'ManageEndpointSecret'
        | 'ManageTransformations'
        | 'CreateAttempts'
        | 'ManageEndpoint'
        | 'ManageMessages'
      )[];
      /** @description ViewBase only */
      readOnly: boolean;
      /** @description Svix sessionId the portal token was issued with */
      sessionId?: string;
      /** @description Svix featureFlags the portal token was issued with */
      featureFlags: string[];
      /** @description When the credential stops working (RFC 3339), null = until revoked */
      expiresAt: string | null;
    };
    ExpungeAllContentsIn: {
      /** @description Only messages carrying this tag (Tidings) */
      tag?: string | null;
      /** @description Only messages whose eventId starts with this (Tidings) */
      eventIdPrefix?: string | null;
    };
    ExpungeAllContentsOut: {
      id: string;
      /** @enum {string} */
      status: 'running' | 'finished' | 'failed';
      task: string;
      updatedAt: string;
    };
    EndpointIn: {
      /** @description http(s) URL; addresses refused by the egress policy answer 422 url_not_allowed */
      url: string;
      description?: string | null;
      uid?: string | null;
      disabled?: boolean | null;
      eventTypes?: string[] | null;
      filterTypes?: string[] | null;
      channels?: string[] | null;
      secret?: string | null;
      metadata?: {
        [key: string]: string;
      } | null;
      /** @description Custom static headers sent with every request */
      headers?: {
        [key: string]: string;
      } | null;
      throttleRate?: number | null;
      rateLimit?: number | null;
      version?: number | null;
    };
    EndpointUpdate: {
      /** @description http(s) URL; addresses refused by the egress policy answer 422 url_not_allowed */
      url: string;
      description?: string | null;
      uid?: string | null;
      disabled?: boolean | null;
      eventTypes?: string[] | null;
      filterTypes?: string[] | null;
      channels?: string[] | null;
      metadata?: {
        [key: string]: string;
      } | null;
      /** @description Custom static headers sent with every request */
      headers?: {
        [key: string]: string;
      } | null;
      throttleRate?: number | null;
      rateLimit?: number | null;
      version?: number | null;
    };
    EndpointPatch: {
      /** @description http(s) URL; addresses refused by the egress policy answer 422 url_not_allowed */
      url?: string;
      description?: string;
      uid?: string | null;
      disabled?: boolean;
      eventTypes?: string[] | null;
      filterTypes?: string[] | null;
      channels?: string[] | null;
      metadata?: {
        [key: string]: string;
      };
      headers?: {
        [key: string]: string;
      } | null;
      throttleRate?: number | null;
      rateLimit?: number | null;
      version?: number;
    };
    EndpointOut: {
      id: string;
      uid: string | null;
      url: string;
      description: string;
      version: number;
      disabled: boolean;
      eventTypes: string[] | null;
      filterTypes: string[] | null;
      channels: string[] | null;
      throttleRate: number | null;
      rateLimit: number | null;
      metadata: {
        [key: string]: string;
      };
      headers: {
        [key: string]: string;
      };
      createdAt: string;
      updatedAt: string;
    };
    ListResponseEndpointOut: {
      data: components['schemas']['EndpointOut'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    EndpointSecretOut: {
      key: string;
    };
    TransformationsParams: {
      /** @description Delivered byte for byte (UTF-8) instead of payload */
      rawPayload: string;
      /** @description Only content-type: the raw body's content type (default text/plain) */
      headers?: {
        'content-type'?: string;
      } | null;
    };
    MessageIn: {
      eventType: string;
      eventId?: string | null;
      /** @description A JSON object; delivered byte for byte */
      payload: unknown;
      channels?: string[] | null;
      tags?: string[] | null;
      payloadRetentionHours?: number | null;
      /** @description Days; mutually exclusive with payloadRetentionHours */
      payloadRetentionPeriod?: number | null;
      application?: components['schemas']['ApplicationIn'] | null;
      transformationsParams?: components['schemas']['TransformationsParams'] | null;
      deliverAt?: unknown | null;
    };
    MessageOut: {
      id: string;
      eventId: string | null;
      eventType: string;
      payload: unknown;
      channels: string[] | null;
      tags: string[] | null;
      timestamp: string;
      deliverAt: string | null;
    };
    ListResponseMessageOut: {
      data: components['schemas']['MessageOut'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    RetryPolicyIn: {
      /**
       * @description Delay after each failed attempt (ms, or "5s", "30m", "2h"…); past its end the last delay
       * repeats
       */
      schedule?: unknown[] | null;
      /** @description Overall deadline of one attempt (ms, or "5s"…); TIDINGS_LEASE must exceed it plus 1 s */
      attemptTimeout?: unknown | null;
      /** @description Attempts in all, the first included (1 to TIDINGS_RETRY_POLICY_MAX_ATTEMPTS) */
      maxAttempts?: number | null;
    };
    RetryPolicyPatch: {
      /**
       * @description Delay after each failed attempt (ms, or "5s", "30m", "2h"…); past its end the last delay
       * repeats
       */
      schedule?: unknown[] | null;
      /** @description Overall deadline of one attempt (ms, or "5s"…); TIDINGS_LEASE must exceed it plus 1 s */
      attemptTimeout?: unknown | null;
      /** @description Attempts in all, the first included (1 to TIDINGS_RETRY_POLICY_MAX_ATTEMPTS) */
      maxAttempts?: number | null;
    };
    RetryPolicyOut: {
      policy: {
        schedule: number[] | null;
        attemptTimeout: number | null;
        maxAttempts: number | null;
      };
      /** @description The event type whose policy took part in `effective` (endpoints only) */
      eventType?: string | null;
      effective: {
        schedule: number[];
        attemptTimeout: number;
        maxAttempts: number;
        /**
         * @description Where each field came from: endpoint, eventType, installation (the settings), or
         * schedule (maxAttempts: the schedule's entries + 1)
         */
        sources: {
          /** @enum {string} */
          schedule: 'endpoint' | 'eventType' | 'installation' | 'schedule';
          /** @enum {string} */
          attemptTimeout: 'endpoint' | 'eventType' | 'installation' | 'schedule';
          /** @enum {string} */
          maxAttempts: 'endpoint' | 'eventType' | 'installation' | 'schedule';
        };
      };
    };
    ReceiverAuthIn: {
      /** @description HTTP basic credentials, sent as Authorization: Basic */
      basic?: {
        /** @description The user id (no ":", RFC 7617) */
        username: string;
        /** @description Never shown back: GET shows a masked hint */
        password: string;
      } | null;
      /** @description OAuth2 client credentials; the token is sent as Authorization: Bearer */
      oauth2?: {
        /**
         * @description The token endpoint: https (http only to a literal private address that
         * TIDINGS_EGRESS_ALLOWLIST opens)
         */
        tokenUrl: string;
        clientId: string;
        /** @description Sent with HTTP basic client authentication; never shown back */
        clientSecret: string;
        scope?: string | null;
        /** @description Sent as the `audience` form field when set */
        audience?: string | null;
      } | null;
      /** @description A TLS client certificate for this endpoint's connections */
      mtls?: {
        /** @description PEM: the client certificate, then any intermediates (with key) */
        certificate?: string | null;
        /** @description PEM, unencrypted: the private key of the certificate; never shown back */
        key?: string | null;
        /**
         * @description PEM: the CA bundle the receiver's certificate must chain to, instead of the system's
         * roots
         */
        ca?: string | null;
      } | null;
    };
    ReceiverAuthPatch: {
      /** @description Left out: kept. null: removed. A field left out keeps the stored one (password included) */
      basic?: {
        /** @description The user id (no ":", RFC 7617) */
        username?: string;
        /** @description Never shown back: GET shows a masked hint */
        password?: string;
      } | null;
      /**
       * @description Left out: kept. null: removed. A field left out keeps the stored one (clientSecret included)
       */
      oauth2?: {
        /**
         * @description The token endpoint: https (http only to a literal private address that
         * TIDINGS_EGRESS_ALLOWLIST opens)
         */
        tokenUrl?: string;
        clientId?: string;
        /** @description Sent with HTTP basic client authentication; never shown back */
        clientSecret?: string;
        scope?: string | null;
        /** @description Sent as the `audience` form field when set */
        audience?: string | null;
      } | null;
      /**
       * @description Left out: kept. null: removed. A field left out keeps the stored one (key included); null
       * removes it
       */
      mtls?: {
        /** @description PEM: the client certificate, then any intermediates (with key) */
        certificate?: string | null;
        /** @description PEM, unencrypted: the private key of the certificate; never shown back */
        key?: string | null;
        /**
         * @description PEM: the CA bundle the receiver's certificate must chain to, instead of the system's
         * roots
         */
        ca?: string | null;
      } | null;
    };
    ReceiverAuthOut: {
      basic: {
        username: string;
        /** @description Masked hint */
        password: string;
      } | null;
      oauth2: {
        tokenUrl: string;
        clientId: string;
        /** @description Masked hint */
        clientSecret: string;
        scope: string | null;
        audience: string | null;
      } | null;
      mtls: {
        certificate: {
          subject: string;
          issuer: string;
          validTo: string;
          fingerprint256: string;
        } | null;
        /** @description Masked */
        key: string | null;
        ca:
          | {
              subject: string;
              issuer: string;
              validTo: string;
              fingerprint256: string;
            }[]
          | null;
      } | null;
      /** @description Changes at every PUT; null when nothing is set */
      version: string | null;
    };
    EndpointFilterIn: {
      /**
       * @description A JSON match over the message (docs/reference/api.md, "Payload filters"): field names
       * (eventType, eventId, channels, tags, payload, then the payload's own fields, nested) with a value to
       * equal or an object of operators: $eq, $neq, $gt, $gte, $lt, $lte, $in, $nin, $exists, and $and, $or,
       * $not. Bounded by TIDINGS_FILTER_MAX_BYTES, _DEPTH, _NODES and _PATH; a wrong part is 422 naming it under
       * body.filter.
       */
      filter: {
        [key: string]: unknown;
      };
    };
    EndpointFilterOut: {
      filter: {
        [key: string]: unknown;
      } | null;
    };
    FilterSampleMessage: {
      eventType: string;
      eventId?: string | null;
      channels?: string[] | null;
      tags?: string[] | null;
      /** @description The JSON payload; absent = a raw message (payload conditions fail) */
      payload?: unknown;
    };
    FilterTestIn: {
      /**
       * @description A JSON match over the message (docs/reference/api.md, "Payload filters"): field names
       * (eventType, eventId, channels, tags, payload, then the payload's own fields, nested) with a value to
       * equal or an object of operators: $eq, $neq, $gt, $gte, $lt, $lte, $in, $nin, $exists, and $and, $or,
       * $not. Bounded by TIDINGS_FILTER_MAX_BYTES, _DEPTH, _NODES and _PATH; a wrong part is 422 naming it under
       * body.filter.
       */
      filter: {
        [key: string]: unknown;
      };
      message: components['schemas']['FilterSampleMessage'];
    };
    FilterTestOut: {
      /** @description The message would be delivered to an endpoint with this filter */
      matches: boolean;
    };
    FilteredEndpointsOut: {
      data: {
        endpointId: string;
        /** @description Null: the endpoint was deleted since */
        url: string | null;
        description: string | null;
      }[];
    };
    RecoverIn: {
      /**
       * Format: date-time
       * @description Messages created at or after this instant
       */
      since: unknown;
      /** @description Messages created before this instant (absent = no upper bound) */
      until?: unknown | null;
    };
    ReplayIn: {
      /**
       * Format: date-time
       * @description Messages created at or after this instant
       */
      since: unknown;
      /** @description Messages created before this instant (absent = no upper bound) */
      until?: unknown | null;
    };
    BulkReplayIn: {
      /**
       * Format: date-time
       * @description Messages created at or after this instant
       */
      since: unknown;
      /** @description Messages created before this instant (absent = no upper bound) */
      until?: unknown | null;
      eventTypes?: string[] | null;
      channel?: string | null;
      tag?: string | null;
      status?: number | null;
      statusCodeClass?: number | null;
    };
    DeadLetterReplayIn: {
      /**
       * Format: date-time
       * @description Messages created at or after this instant
       */
      since: unknown;
      /** @description Messages created before this instant (absent = no upper bound) */
      until?: unknown | null;
      /** @description One endpoint (id or uid); absent = every endpoint of the application */
      endpointId?: string | null;
      eventTypes?: string[] | null;
    };
    RecoverOut: {
      id: string;
      /** @enum {string} */
      status: 'running' | 'finished' | 'failed';
      /** @description endpoint.recover, endpoint.replay, endpoint.bulk-replay, dead-letter.replay (Tidings) */
      task: string;
      updatedAt: string;
      /**
       * @description Progress of a replay task: messagesSent (queued to be sent again), scanned, alreadyQueued,
       * expunged, unavailable (endpoint deleted or disabled), error (why it failed); for a task of one endpoint,
       * held (its pending deliveries in the window that wait behind the endpoint rather than their schedule: a
       * recover selects dead letters only, so it neither sends these again nor counts them as queued; counted
       * when the task starts and again when it finishes), heldBy ({paused, breaker, throttled}: held by what
       * holds them) and heldUntil (ISO-8601, the latest end of those holds that has one; null when none has) —
       * null for a task over a whole application
       */
      data: {
        [key: string]: unknown;
      };
    };
    BackgroundTaskOut: {
      id: string;
      /** @enum {string} */
      status: 'running' | 'finished' | 'failed';
      task: string;
      /**
       * @description Progress of a replay task: messagesSent (queued to be sent again), scanned, alreadyQueued,
       * expunged, unavailable (endpoint deleted or disabled), error (why it failed); for a task of one endpoint,
       * held (its pending deliveries in the window that wait behind the endpoint rather than their schedule: a
       * recover selects dead letters only, so it neither sends these again nor counts them as queued; counted
       * when the task starts and again when it finishes), heldBy ({paused, breaker, throttled}: held by what
       * holds them) and heldUntil (ISO-8601, the latest end of those holds that has one; null when none has) —
       * null for a task over a whole application
       */
      data: {
        [key: string]: unknown;
      };
      updatedAt: string;
    };
    ListResponseBackgroundTaskOut: {
      data: components['schemas']['BackgroundTaskOut'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    DeliverySearchOut: {
      msgId: string;
      eventId: string | null;
      eventType: string;
      channels: string[] | null;
      tags: string[] | null;
      msgTimestamp: string;
      endpointId: string;
      /** @description pending, leased, succeeded, dead, skipped, canceled */
      deliveryState: string;
      /** @description Svix MessageStatus: 0 success, 1 pending, 2 fail, 3 sending, 4 canceled (skipped too) */
      status: number;
      statusText: string;
      /**
       * @description Why the delivery is in its state: the reason of its latest timeline row
       * (docs/reference/timeline.md), e.g. endpoint_disabled (skipped), endpoint_deleted (canceled), exhausted /
       * gone (dead), retry_scheduled (pending)
       */
      reason: string | null;
      /** @description When it entered its state (that row's instant) */
      stateChangedAt: string | null;
      attemptCount: number;
      lastStatusCode: number | null;
      lastErrorKind: string | null;
      lastAttemptAt: string | null;
      nextAttempt: string | null;
      /**
       * @description What holds this pending delivery back: the endpoint's pause, its circuit breaker (open, or
       * half-open awaiting its probe), or a receiver's Retry-After throttle; null = not held (it goes at
       * nextAttempt)
       */
      heldBy: ('paused' | 'breaker' | 'throttled') | null;
      /**
       * @description When the hold ends (the breaker's cool-down or the throttle), ISO-8601; null when held with
       * no set end (paused until resumed; a breaker awaiting its probe's outcome) or not held
       */
      heldUntil: string | null;
    };
    ListResponseDeliverySearchOut: {
      data: components['schemas']['DeliverySearchOut'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    EndpointSecretRotateIn: {
      /** @description whsec_ + base64 of 24–64 bytes (or the bare base64); omitted = generated */
      key?: string | null;
      /** @description How long the previous secret still signs, 0–604800 s */
      gracePeriodSeconds?: number | null;
    };
    EndpointHeadersIn: {
      headers: {
        [key: string]: string;
      };
    };
    EndpointHeadersPatchIn: {
      headers: {
        [key: string]: string | null;
      };
      deleteHeaders?: string[] | null;
    };
    EndpointHeadersOut: {
      headers: {
        [key: string]: string;
      };
      sensitive: string[];
    };
    EndpointStats: {
      success: number;
      pending: number;
      sending: number;
      fail: number;
      canceled: number;
      skipped: number;
    };
    EventExampleIn: {
      eventType: string;
      /** @description Which entry of the schema's `examples` (default 0) */
      exampleIndex?: number | null;
    };
    EventTypeIn: {
      name: string;
      description: string;
      archived?: boolean | null;
      deprecated?: boolean | null;
      schemas?: {
        [key: string]: unknown;
      } | null;
      groupName?: string | null;
      featureFlags?: string[] | null;
      featureFlag?: string | null;
    };
    EventTypeUpsertIn: {
      description: string;
      archived?: boolean | null;
      deprecated?: boolean | null;
      schemas?: {
        [key: string]: unknown;
      } | null;
      groupName?: string | null;
      featureFlags?: string[] | null;
      featureFlag?: string | null;
    };
    EventTypePatch: {
      description?: string;
      archived?: boolean;
      deprecated?: boolean;
      schemas?: {
        [key: string]: unknown;
      } | null;
      groupName?: string | null;
      featureFlags?: string[] | null;
      featureFlag?: string | null;
    };
    EventTypeOut: {
      name: string;
      description: string;
      archived: boolean;
      deprecated: boolean;
      schemas: {
        [key: string]: unknown;
      } | null;
      groupName: string | null;
      featureFlags: string[] | null;
      featureFlag: string | null;
      createdAt: string;
      updatedAt: string;
    };
    ListResponseEventTypeOut: {
      data: components['schemas']['EventTypeOut'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
    SettingOut: {
      /** @description Name in the configuration (camelCase) */
      name: string;
      /** @description Environment variable */
      env: string;
      /**
       * @description Effective value as text (secrets masked; in URLs the password and secret query parameters
       * such as password, sslpassword, token, key masked); null = unset
       */
      value: string | null;
      /** @description The default as written in the configuration reference (e.g. `5s`); null = unset */
      defaultValue: string | null;
      /**
       * @description The effective value equals the default once both are parsed (so `5000` ms and `5s` agree)
       */
      isDefault: boolean;
      unit: string;
      description: string;
      secret: boolean;
    };
    SettingsOut: {
      data: components['schemas']['SettingOut'][];
    };
    PortalBrandingOut: {
      name: string;
      logoUrl: string | null;
      /** @description #rrggbb */
      accentColor: string;
    };
    TransportOut: {
      /**
       * @description TIDINGS_TRANSPORT: postgres (the claim over the delivery rows), rabbitmq or nats
       * @enum {string}
       */
      transport: 'postgres' | 'rabbitmq' | 'nats';
      /**
       * @description postgres: connected while this process is ready (its database answers), else disconnected. A
       * broker: this process's broker connection (disconnected = reconnecting with back-off; stopped = shut
       * down); null when this process holds none (an API process without a dispatcher: each dispatcher reports
       * its own on /readyz)
       */
      state: ('connecting' | 'connected' | 'disconnected' | 'stopped') | null;
      /**
       * @description Messages in the broker; null for postgres, without this process's connection, or while it is
       * down
       */
      depth: {
        /** @description Published and not yet handed to a consumer, over every shard */
        waiting: number;
        /** @description Dead-lettered by the broker and not yet read, when known */
        deadLetters: number | null;
      } | null;
      /**
       * @description Since this process started, from its metrics (docs/reference/metrics.md); null for postgres
       * or without this process's broker connection
       */
      counts: {
        /** @description Delivery ids the broker confirmed (the sweep included) */
        published: number;
        /** @description Delivery ids published again by the sweep (their message was lost) */
        swept: number;
        /** @description Delivery ids the broker did not confirm (published again by a later round) */
        publishFailed: number;
        /** @description Messages received that the broker had delivered before */
        redelivered: number;
        /** @description Messages the broker dead-lettered */
        deadLettered: number;
        /** @description Times the topology was declared again because a queue had gone */
        topologyRestored: number;
      } | null;
    };
    ListResponseApiKeyOut: {
      data: components['schemas']['ApiKeyOut'][];
      iterator: string | null;
      prevIterator: string | null;
      done: boolean;
    };
  };
  responses: never;
  parameters: never;
  requestBodies: never;
  headers: never;
  pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
