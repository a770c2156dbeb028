// The API docs: Swagger UI from the vendored swagger-ui-dist, reading this server's
// /openapi.json; the online validator badge is off (it would call an outside host).
window.addEventListener("load", function () {
  "use strict";
  window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", validatorUrl: null,
                                 deepLinking: false });
});
