package table

import "net/http"

func (s *Server) batch(req *request) error {
	return newErr(http.StatusNotImplemented, codeNotImplemented, "batches are not supported yet")
}
